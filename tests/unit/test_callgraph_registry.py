"""A registry filled by a decorator factory in one module and read in another, in the call
graph (tracer/index/calls/): a module's globals read from elsewhere, a store at a key that is
no constant, `*names`, a class value's classmethod and `cls(...)` in it. A snippet in, the
exact edges out."""

from __future__ import annotations

from tracer.analyses.callgraph import call_graph


def graph_of(snippet_session, files: dict[str, str]) -> dict[str, list[str]]:
    """The call graph of FILES, the nodes without edges left out."""
    graph = call_graph(snippet_session(files))
    return {caller: callees for caller, callees in graph.items() if callees}


REGISTER = """
    REGISTRY = {}

    def register(name):
        def deco(cls):
            REGISTRY[name] = cls
            return cls

        return deco
    """

FAST = """
    from registry import register

    @register("fast")
    class Fast:
        def __init__(self):
            pass
    """


def test_a_global_of_another_module_read_as_an_attribute_and_imported(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "registry.py": REGISTER,
            "models.py": FAST,
            "app.py": """
                import registry
                from registry import REGISTRY

                def by_module():
                    registry.REGISTRY["fast"]()

                def imported():
                    REGISTRY["fast"]()
                """,
        },
    ) == {
        "app.by_module": ["models.Fast.__init__"],
        "app.imported": ["models.Fast.__init__"],
        "models": ["registry.register"],
    }


def test_a_store_at_a_key_that_holds_nothing_known_is_read_at_any_key(snippet_session):
    """The key `cls.__name__.lower()` is no value followed: the store is at any key, so a read
    at a constant key or at a parameter's finds the class."""
    assert graph_of(
        snippet_session,
        {
            "registry.py": """
                REGISTRY = {}

                def register():
                    def deco(cls):
                        REGISTRY[cls.__name__.lower()] = cls
                        return cls

                    return deco

                def get(name):
                    return REGISTRY[name]
                """,
            "models.py": """
                from registry import register

                @register()
                class Fast:
                    def __init__(self):
                        pass
                """,
            "app.py": """
                import registry

                def by_constant():
                    registry.REGISTRY["fast"]()

                def by_name(name):
                    registry.get(name)()
                """,
        },
    ) == {
        "app.by_constant": ["models.Fast.__init__"],
        "app.by_name": ["models.Fast.__init__", "registry.get"],
        "models": ["registry.register"],
    }


def test_names_given_as_varargs_key_the_stores_made_in_a_loop_over_them(snippet_session):
    """`register("fast", "quick")` packs its names into `*names`; the loop stores the class at
    each: a read at either runs its `__init__`, a read at another key nothing (of several
    calls, each name would key each class: the follower, as PyCG, tells no call apart)."""
    assert graph_of(
        snippet_session,
        {
            "registry.py": """
                REGISTRY = {}

                def register(*names):
                    def deco(cls):
                        for name in names:
                            REGISTRY[name] = cls
                        return cls

                    return deco
                """,
            "models.py": """
                from registry import register

                @register("fast", "quick")
                class Fast:
                    def __init__(self):
                        pass
                """,
            "app.py": """
                from registry import REGISTRY

                def quick():
                    REGISTRY["quick"]()

                def other():
                    REGISTRY["other"]()
                """,
        },
    ) == {"app.quick": ["models.Fast.__init__"], "models": ["registry.register"]}


def test_a_classmethod_called_on_a_class_from_a_registry_constructs_that_class(snippet_session):
    """`registry.get_model(model)` may hold HFLM (a read at a key that is no constant takes
    every entry): `.create(...)` runs the classmethod HFLM inherits, whose `cls` holds HFLM,
    so `cls(**arg_dict)` runs `HFLM.__init__` (LM has none)."""
    assert graph_of(
        snippet_session,
        {
            "app/__init__.py": "",
            "app/registry.py": """
                MODEL_REGISTRY = {}

                def register_model(*names):
                    def decorate(cls):
                        for name in names:
                            MODEL_REGISTRY[name] = cls
                        return cls

                    return decorate

                def get_model(model_name):
                    return MODEL_REGISTRY[model_name]
                """,
            "app/models.py": """
                from app.registry import register_model

                class LM:
                    @classmethod
                    def create(cls, arg_dict):
                        return cls(**arg_dict)

                @register_model("hf", "huggingface")
                class HFLM(LM):
                    def __init__(self, batch_size=1):
                        self.batch_size_per_gpu = int(batch_size)
                """,
            "app/main.py": """
                from app import registry

                def evaluate(model, batch_size):
                    lm = registry.get_model(model).create({"batch_size": batch_size})
                    return lm
                """,
        },
    ) == {
        "app.main.evaluate": ["app.models.LM.create", "app.registry.get_model"],
        "app.models": ["app.registry.register_model"],
        "app.models.HFLM.__init__": ["<builtin>.int"],
        "app.models.LM.create": ["app.models.HFLM.__init__"],
    }


def test_cls_of_a_classmethod_holds_the_subclasses_it_is_called_on(snippet_session):
    """Called on a subclass by name, through `super()` in an override, or on an instance:
    `cls(...)` makes each; a subclass it is never called on is not made."""
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                class Base:
                    def __init__(self):
                        pass

                    @classmethod
                    def make(cls):
                        return cls()

                class Named(Base):
                    def __init__(self):
                        pass

                class Overriding(Base):
                    def __init__(self):
                        pass

                    @classmethod
                    def make(cls):
                        return super().make()

                class Held(Base):
                    def __init__(self):
                        pass

                class Never(Base):
                    def __init__(self):
                        pass

                def main():
                    Named.make()
                    Overriding.make()
                    Held().make()
                """
        },
    ) == {
        "app.Base.make": [
            "app.Base.__init__",
            "app.Held.__init__",
            "app.Named.__init__",
            "app.Overriding.__init__",
        ],
        "app.Overriding.make": ["<builtin>.super", "app.Base.make"],
        "app.main": [
            "app.Base.make",
            "app.Held.__init__",
            "app.Overriding.make",
        ],
    }


def test_a_decorator_written_without_a_call_is_given_the_class_or_function(snippet_session):
    """`@register` returns what it is given, no wrapper: it is given the class and the
    function it decorates, which it stores, and a call of its parameter runs them."""
    assert graph_of(
        snippet_session,
        {
            "registry.py": """
                REGISTRY = {}

                def register(obj):
                    REGISTRY[obj.__name__] = obj
                    return obj

                def checked(fn):
                    fn()
                    return fn
                """,
            "models.py": """
                from registry import checked, register

                @register
                class Fast:
                    def __init__(self):
                        pass

                @register
                @checked
                def helper():
                    pass
                """,
            "app.py": """
                from registry import REGISTRY

                def by_name(name):
                    REGISTRY[name]()
                """,
        },
    ) == {
        "app.by_name": ["models.Fast.__init__", "models.helper"],
        "models": ["registry.checked", "registry.register"],
        "registry.checked": ["models.helper"],
    }
