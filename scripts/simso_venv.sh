#!/usr/bin/env bash
# A separate virtualenv (.venv-simso) with SimSo 0.8.5, the reference of the speed
# benchmark's anchor (python -m schedlab.bench --suite --simso). SimSo is an
# optional extra: nothing else in schedlab needs it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-simso/bin/python ] || python3 -m venv .venv-simso
.venv-simso/bin/python -m pip install -q "simso==0.8.5"
.venv-simso/bin/python -c "import simso; print('simso-venv: ok')"
