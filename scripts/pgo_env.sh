# Sourced by the scripts that build the native module (setup.sh, build_wheel.sh, pgo.sh) and
# by `python -m schedlab.bench --instructions` for each tree it builds: exports the RUSTFLAGS
# of a profile-guided build when this tree holds a profile (pgo/schedlab.profdata, made by
# scripts/pgo.sh) made by this very rustc, and says why not otherwise.
#
# Why a committed profile: building one takes an instrumented build and a training run
# (about 7 minutes on the 2-core machine kind) that every fresh setup would repeat; the
# profile is about 12 MB, 3 MB in git. Why only from the same rustc: the profile names
# functions by their mangled symbols and control-flow hashes, which another compiler
# version changes, so its data would not apply (the build is then plain, never wrong:
# a profile steers layout and inlining, not what the code computes).
pgo_profile="$PWD/pgo/schedlab.profdata"
pgo_made_by=$(sed -n 's/^rustc: //p' pgo/PROFILE 2>/dev/null || true)
pgo_rustc=$(rustc -V 2>/dev/null || true)
if [ "${SCHEDLAB_NO_PGO:-}" = 1 ]; then
  echo "pgo: SCHEDLAB_NO_PGO=1: a plain build" >&2
elif [ ! -f "$pgo_profile" ]; then
  echo "pgo: no profile in pgo/ (scripts/pgo.sh makes one): a plain build" >&2
elif [ "$pgo_made_by" != "$pgo_rustc" ]; then
  echo "pgo: pgo/schedlab.profdata was made by '$pgo_made_by', this is '$pgo_rustc': a plain build (scripts/pgo.sh makes a new profile)" >&2
else
  # A function changed since the profile was made gets no profile data (LLVM's
  # control-flow hash check): it is optimised as in a plain build.
  export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-Cprofile-use=$pgo_profile"
  SCHEDLAB_PGO="pgo/schedlab.profdata ($(sed -n 's/^trained at: //p' pgo/PROFILE), $pgo_rustc)"
  export SCHEDLAB_PGO
  echo "pgo: profile-guided build with $SCHEDLAB_PGO" >&2
fi
unset pgo_profile pgo_made_by pgo_rustc
