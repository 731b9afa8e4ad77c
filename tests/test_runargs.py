"""runargs.parse_run, the argparse-free parser of `schedlab run`, against argparse itself: wherever
it answers, its answer is argparse's; where argparse refuses, it does not answer."""

import contextlib
import io
import random
import subprocess
import sys

import pytest
from schedlab.cliargs import parser
from schedlab.runargs import RUN_ARGUMENTS, parse_run

# A value each option takes, and one argparse refuses where there is one.
GOOD = {"--scheduler": "cfs,eevdf", "--cpus": "4", "--smt": "2", "--llc": "0", "--capacity": "512,1024",
        "--freq": "2000/3000,1500", "--governor": "performance", "--freq-levels": "1000,2000",
        "--hotplug": "5=-3,8=+3", "--dl-policy": "llf", "--hz": "1000", "--machine": "m.json",
        "--duration": "500ms", "--seed": "7", "--set": "nohz=0", "--trace": "t.pftrace",
        "--trace-format": "ftrace", "--json": "out.json", "--fairness": "a,b", "--start-cpus": "hog-1=2,x=0",
        "--start-from": "host.json"}
BAD = {"--cpus": "0", "--smt": "x", "--llc": "-1", "--capacity": "a,b", "--freq": "0", "--freq-levels": "1.5",
       "--dl-policy": "fifo", "--hz": "-5", "--seed": "1e3", "--trace-format": "json", "--start-cpus": "hog"}
FLAGS = [n for names, kw in RUN_ARGUMENTS for n in names if kw.get("action") == "store_true"]


WHOLE = parser()  # the whole command line, as cli.main falls back to


def argparse_answer(argv):
    """vars() of argparse's namespace for argv, or None where it exits (an error, or help)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(WHOLE.parse_args(argv))
        except SystemExit:
            return None


def test_every_option_has_a_sample():
    options = [n for names, _ in RUN_ARGUMENTS for n in names if n.startswith("-")]
    assert sorted(set(options) - set(FLAGS)) == sorted(GOOD)


def _valid(rng):
    opts = rng.sample(sorted(GOOD), rng.randint(0, len(GOOD)))
    words = []
    for o in opts:
        v = GOOD[o]
        words.append([f"{o}={v}"] if rng.random() < 0.3 else [o, v])
        if o in ("--set", "--start-cpus") and rng.random() < 0.5:
            words.append([o, v])  # appended twice
    words += [[f] for f in FLAGS if rng.random() < 0.5]
    rng.shuffle(words)
    words.insert(rng.randint(0, len(words)), ["w.json"])
    return ["run"] + [w for ws in words for w in ws]


def _spoiled(rng, argv):
    """argv with one thing argparse refuses, or reads in a way parse_run leaves to it."""
    argv = list(argv)
    k = rng.randrange(10)
    at = rng.randint(1, len(argv))
    if k == 0:
        o = rng.choice(sorted(BAD))
        argv[at:at] = [o, BAD[o]]
    elif k == 1:
        argv[at:at] = [rng.choice(["-h", "--help", "--", "-", "-3", "--bogus"])]
    elif k == 2:
        argv[at:at] = ["--cpu", "4"]  # an abbreviation argparse accepts
    elif k == 3:
        argv.append(rng.choice(sorted(GOOD)))  # its value missing
    elif k == 4:
        argv[at:at] = ["second.json"]
    elif k == 5:
        argv = [w for w in argv if w != "w.json"]
    elif k == 6:
        argv[at:at] = [f"{rng.choice(FLAGS)}=1"]
    elif k == 7:
        argv[at:at] = ["--json", "-"]  # a value starting with "-"
    elif k == 8:
        argv[at:at] = ["--seed=-1"]
    else:
        argv[at:at] = ["--scheduler="]  # an empty value, which argparse takes
    return argv


def test_parse_run_answers_as_argparse():
    rng = random.Random(1)
    answered = 0
    for _ in range(400):
        good = _valid(rng)
        fast = parse_run(good)
        assert fast is not None, good  # the plain spellings never need argparse
        assert vars(fast) == argparse_answer(good), good
        answered += 1
        for argv in (_spoiled(rng, good), _spoiled(rng, _spoiled(rng, good))):
            fast = parse_run(argv)
            slow = argparse_answer(argv)
            if fast is not None:  # else argparse parses it, or reports the error
                assert vars(fast) == slow, argv
    assert answered == 400


@pytest.mark.parametrize("argv", [["run"], ["run", "--help"], ["--version"], ["check", "w.json"],
                                  ["run", "w.json", "--cpus", "0"], ["run", "w.json", "--cpu", "4"]])
def test_left_to_argparse(argv):
    assert parse_run(argv) is None


def test_run_imports_no_argparse(tmp_path):
    """The reason for parse_run: `schedlab run` starts without argparse, `re` or `enum`."""
    wl = tmp_path / "w.json"
    wl.write_text('{"global": {"duration": 1}, "tasks": {"t": {"run": 1000}}}')
    code = ("import sys; from schedlab.cli import main; rc = main(['run', sys.argv[1], '--quiet']); "
            "print(sorted(m for m in ('argparse', 're', 'enum', 'gettext') if m in sys.modules)); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code, str(wl)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
