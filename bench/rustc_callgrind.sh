#!/bin/sh
# RUSTC_WRAPPER for `bench/scale.py rustc`: runs rustc under callgrind for
# the fixture's library only, writing the profile to $SCALE_CALLGRIND_OUT;
# every other crate is compiled as usual.
rustc="$1"
shift
case " $* " in
*" --crate-name scale "*"--crate-type lib"*)
    exec valgrind --tool=callgrind --log-file=/dev/null --callgrind-out-file="$SCALE_CALLGRIND_OUT" "$rustc" "$@"
    ;;
esac
exec "$rustc" "$@"
