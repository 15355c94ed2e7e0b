; Imports anywhere in a module: top level, under `if TYPE_CHECKING:`, inside functions.

; import a.b, import a.b as c
(import_statement) @reference.import

; from a import b, from ..a import b as c, from . import b
(import_from_statement) @reference.import.from
