#!/usr/bin/env bash
# The man page and the bash completion cover every command and every flag the program
# accepts, and nothing else. The truth is the program: its command list (`speedup
# --help`) and each command's getopt table (cli/cmd_NAME.c, with cli/grid.h's and
# cli/memopt.h's and cli/import_flags.h's flags where the table pastes GRID_LONG_OPTIONS,
# MEMOPT_LONG_OPTIONS, IMPORT_FLAGS_LONG_OPTIONS); a flag the table has but the command refuses
# (advise --workers) must be refused when given, and is not completed.
# usage: test_docs.sh SOURCE_DIR SPEEDUP_BIN
set -euo pipefail
src=$1 bin=$2
man=$src/packaging/speedup.1
completion=$src/packaging/speedup.bash-completion
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# The flags of one getopt table: every { "name", ... } between "options[] = {" and "};".
table_flags() {
    awk '/struct option options\[\] = \{/ {on = 1} on {print} on && /\};/ {exit}' "$1" |
        grep -o '{ *"[a-z0-9-]*"' | sed 's/{ *"/--/; s/"$//'
}
macro_flags() { # MACRO HEADER: the flags of a table macro a command pastes
    awk -v def="#define $1" 'index($0, def) == 1 {on = 1} on {print} on && !/\\$/ {exit}' "$2" |
        grep -o '{ *"[a-z0-9-]*"' | sed 's/{ *"/--/; s/"$//'
}
registry_flags() { # the what-if flags model/params.h's PF rows give GRID_LONG_OPTIONS
    grep -o '"[a-z0-9-]*", *PARAM_[A-Z]*) *\\$' "$src/model/params.h" | sed 's/^"/--/; s/".*//'
}
accepted_flags() { # CMD
    local file=$src/cli/cmd_$1.c
    [ -f "$file" ] || { bad "$1: no $file to read its flags from"; return; }
    table_flags "$file"
    if grep -q GRID_LONG_OPTIONS "$file"; then
        macro_flags GRID_LONG_OPTIONS "$src/cli/grid.h"
        registry_flags
    fi
    if grep -q MEMOPT_LONG_OPTIONS "$file"; then macro_flags MEMOPT_LONG_OPTIONS "$src/cli/memopt.h"; fi
    if grep -q IMPORT_FLAGS_LONG_OPTIONS "$file"; then macro_flags IMPORT_FLAGS_LONG_OPTIONS "$src/cli/import_flags.h"; fi
    if grep -q CALIB_TABLE_LONG_OPTIONS "$file"; then macro_flags CALIB_TABLE_LONG_OPTIONS "$src/cli/calib_table.h"; fi
}
# The man page's text from the .SS heading that names COMMAND (or matches a pattern) to
# the next heading; its flags, unescaped.
man_section() {
    awk -v pat="$1" '/^\.S[SH] / {on = ($0 ~ pat)} on {print}' "$man"
}
man_flags() { grep -oE '\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*' | sed 's/\\//g' | sort -u; }
completed() { # WORDS...: what the completion offers for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _speedup
             printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$@" | sort -u
}

bash -n "$completion" || bad "$completion: not valid bash"

commands=$("$bin" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' | sort)
[ -n "$commands" ] || bad "no commands in speedup --help"
[ "$(completed speedup '')" = "$(printf '%s\n' $commands --help --version | sort -u)" ] ||
    bad "completion of the command word: $(completed speedup '' | tr '\n' ' ') (speedup --help: $(echo $commands))"

for cmd in $commands; do
    accepted=$(accepted_flags "$cmd" | sort -u)
    [ -n "$accepted" ] || { bad "$cmd: no flags found in cli/cmd_$cmd.c"; continue; }
    section=$(man_section "speedup $cmd( |\"|$)")
    [ -n "$section" ] || bad "$cmd: no .SS section naming 'speedup $cmd' in $man"
    documented=$(echo "$section" | man_flags)
    if grep -q GRID_LONG_OPTIONS "$src/cli/cmd_$cmd.c"; then
        documented=$( (echo "$documented"; man_section '^\.SS "Grid flags' | man_flags) | sort -u)
    fi
    missing=$(comm -23 <(echo "$accepted") <(echo "$documented") | tr '\n' ' ')
    [ -z "$missing" ] || bad "$cmd: not in the man page's section: $missing"
    offered=$(completed speedup "$cmd" --)
    extra=$(comm -13 <(echo "$accepted") <(echo "$offered") | tr '\n' ' ')
    [ -z "$extra" ] || bad "$cmd: completion offers flags the command does not have: $extra"
    for flag in $(comm -23 <(echo "$accepted") <(echo "$offered")); do
        # Not completed: only right for a flag the command refuses ("... is not used").
        # The unknown flag after it stops any command that would accept it from running.
        said=$("$bin" "$cmd" "$flag=1" --no-such-flag-zz 2>&1 || true)
        if [[ $said != *"not used"* ]]; then
            bad "$cmd: $flag is accepted but not completed"
        fi
    done
done

# Top-level flags.
for flag in --help --version; do
    grep -qx -- "$flag" <<<"$(man_section '^\.SH OPTIONS' | man_flags)" || bad "man page OPTIONS: no $flag"
done

# The page renders without a warning where groff is installed.
if command -v groff >/dev/null; then
    warnings=$(groff -man -ww -z -t "$man" 2>&1)
    [ -z "$warnings" ] || bad "groff: $warnings"
fi

[ "$fail" = 0 ] && echo "man page and completion: $(echo $commands | wc -w) commands, every flag"
exit "$fail"
