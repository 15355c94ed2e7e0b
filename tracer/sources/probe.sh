# sgtrace probe and send: ONE remote command per fetch. It tells the client what the tree
# holds, then sends what the client asks for.
# Arguments: PATH (empty: find the package), PACKAGE, then usual checkout locations.
# Output: "key<TAB>value" lines; "manifest", NUL-terminated "size mtime path" records and
# one more NUL; the git lines ("git<TAB>toplevel<TAB>commit", "dirty<TAB>status line");
# "end". Then it reads from stdin a compressor name (none, zstd, lz4, gzip) on one line and
# the NUL-separated paths to send, and writes their tar, so compressed (nothing read:
# nothing to send).
want=$1
package=$2
shift 2
say() { printf '%s\t%s\n' "$1" "$2"; }
newline='
'
for tool in tar zstd lz4 gzip git find; do
    command -v "$tool" >/dev/null 2>&1 && say tool "$tool"
done

# The folder holding PACKAGE as seen by the Python at $1, or nothing.
package_home() {
    "$1" -c "import os, $package as p; print(os.path.dirname(os.path.dirname(os.path.abspath(p.__file__))))" 2>/dev/null
}
first=""
candidate() {
    printf 'candidate\t%s\t%s\n' "$1" "$2"
    [ -n "$first" ] || first=$2
}

if [ -z "$want" ]; then
    # 1. The Python of a running server.
    for pid in $(ps -eo pid=,args= 2>/dev/null | grep -E "$package(\.launch_server| serve|\.srt)" \
            | grep -v -e grep -e "sgtrace probe" | awk '{print $1}'); do
        exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
        home=$(package_home "$exe") && [ -n "$home" ] && candidate "running process $pid ($exe)" "$home"
    done
    # 2. A systemd unit that runs it.
    if command -v systemctl >/dev/null 2>&1; then
        for unit in $(systemctl list-units --type=service --all --no-legend 2>/dev/null \
                | awk '{print $1}' | grep -i "$package"); do
            exe=$(systemctl show -p ExecStart --value "$unit" 2>/dev/null \
                | sed -n 's/.*path=\([^ ;]*\).*/\1/p' | head -n 1)
            [ -n "$exe" ] || continue
            home=$(package_home "$exe") && [ -n "$home" ] && candidate "systemd unit $unit ($exe)" "$home"
        done
    fi
    # 3. The default Python.
    for python in python3 python; do
        exe=$(command -v "$python" 2>/dev/null) || continue
        home=$(package_home "$exe") && [ -n "$home" ] && candidate "$exe can import $package" "$home" && break
    done
    # 4. Usual checkout locations.
    for location in "$@"; do
        case $location in "~/"*) location=$HOME/${location#"~/"} ;; esac
        [ -f "$location/$package/__init__.py" ] && candidate "checkout at $location" "$location"
    done
    if [ -z "$first" ]; then
        say error "nopackage"
        exit 0
    fi
    want=$first
fi

case $want in "~/"*) want=$HOME/${want#"~/"} ;; "~") want=$HOME ;; esac
# A relative path is in the home folder, as scp has it; made absolute, `-` is no `cd -`
# (back to the last folder), `-x` no option, and CDPATH no detour.
case $want in /*) ;; *) want=${HOME:-.}/$want ;; esac
if [ ! -d "$want" ]; then
    say error "missing"
    exit 0
fi
want=$(cd "$want" && pwd -P)
if [ -f "$want/$package/__init__.py" ]; then
    root=$want; top=$package
elif [ -f "$want/__init__.py" ]; then
    root=$(dirname "$want"); top=$(basename "$want")
elif [ -f "$want/python/$package/__init__.py" ]; then
    root=$want/python; top=$package
else
    root=$want; top=.
fi
say root "$root"
say top "$top"
command -v tar >/dev/null 2>&1 || { say error "notar"; exit 0; }
cd "$root" || exit 0
# find's starting points as ./name: a package named `-x` is a folder, not an option (the
# client drops the ./).
from=$top
[ "$top" = . ] || from=./$top
manifest() {
    find "$from" \( -name __pycache__ -o \( -name '.?*' ! -name . \) \) -prune -o -type f \
        \( -name '*.py' -o -path '*.dist-info/RECORD' -o -path '*.dist-info/METADATA' \) \
        -printf '%s %T@ %p\0'
    if [ "$top" != . ]; then
        for info in "./$top"-*.dist-info; do
            [ -d "$info" ] && find "$info" -type f \( -name RECORD -o -name METADATA \) \
                -printf '%s %T@ %p\0'
        done
    fi
}
git_facts() {
    command -v git >/dev/null 2>&1 || return 0
    # One git for both facts; a repository without commits has no HEAD to name.
    if facts=$(git rev-parse --show-toplevel HEAD 2>/dev/null); then
        printf 'git\t%s\t%s\n' "${facts%%"$newline"*}" "${facts#*"$newline"}"
    elif toplevel=$(git rev-parse --show-toplevel 2>/dev/null); then
        printf 'git\t%s\t\n' "$toplevel"
    else
        return 0
    fi
    # A look, not a write: git status may rewrite the index otherwise (older gits ignore it).
    GIT_OPTIONAL_LOCKS=0 git status --porcelain -- "$top" 2>/dev/null | while IFS= read -r line; do
        say dirty "$line"
    done
}
# git and find both stat every file: run them side by side when a scratch folder can be
# had, and send the manifest in one burst (the client times it to size the link).
if scratch=$(mktemp -d 2>/dev/null); then
    trap 'rm -rf "$scratch"' EXIT
    trap 'exit 1' HUP INT TERM PIPE
    git_facts >"$scratch/git" &
    { manifest; printf '\000'; } >"$scratch/manifest"
    wait
    echo manifest
    cat "$scratch/manifest" "$scratch/git"
else
    echo manifest
    manifest
    printf '\000'
    git_facts
fi
echo end

IFS= read -r compressor || exit 0
case $compressor in
    none) exec tar --null -T - -cf - ;;
    zstd) tar --null -T - -cf - | zstd -1 -T0 -q -c ;;
    lz4) tar --null -T - -cf - | lz4 -1 -q -c ;;
    gzip) tar --null -T - -cf - | gzip -1 -c ;;
esac
exit 0
