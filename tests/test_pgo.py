"""The profile-guided build: scripts/pgo_env.sh uses pgo/schedlab.profdata exactly when this
rustc made it, and the committed profile is one LLVM can read (no timing here)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# An indexed LLVM profile starts with this magic (llvm/ProfileData/InstrProf.h,
# IndexedInstrProf::Magic: "\xfflprofi\x81" little-endian).
INDEXED_MAGIC = 0x8169666F72706CFF

needs_rustc = pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc not on PATH")


def env_of(tree: Path, **extra: str) -> tuple:
    """RUSTFLAGS and SCHEDLAB_PGO as pgo_env.sh leaves them in ``tree``, and what it said."""
    script = 'source scripts/pgo_env.sh; printf "%s\\n%s\\n" "${RUSTFLAGS:-}" "${SCHEDLAB_PGO:-}"'
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **extra}
    p = subprocess.run(["bash", "-c", script], cwd=tree, env=env, capture_output=True, text=True, check=True)
    flags, name = p.stdout.split("\n")[:2]
    return flags, name, p.stderr.strip()


def copy_tree(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "pgo_env.sh", tmp_path / "scripts")
    shutil.copytree(ROOT / "pgo", tmp_path / "pgo")
    return tmp_path


def test_committed_profile_is_an_indexed_llvm_profile():
    data = (ROOT / "pgo" / "schedlab.profdata").read_bytes()
    assert int.from_bytes(data[:8], "little") == INDEXED_MAGIC
    fields = dict(line.split(": ", 1) for line in (ROOT / "pgo" / "PROFILE").read_text().splitlines()
                  if not line.startswith("#"))
    assert fields["rustc"].startswith("rustc ") and fields["training"] == "scripts/pgo_train.py"


@needs_rustc
def test_profile_of_this_rustc_is_used(tmp_path):
    tree = copy_tree(tmp_path)
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True, check=True).stdout.strip()
    profile = tree / "pgo" / "PROFILE"
    lines = [f"rustc: {rustc}" if ln.startswith("rustc: ") else ln for ln in profile.read_text().splitlines()]
    profile.write_text("\n".join(lines) + "\n")
    flags, name, said = env_of(tree)
    assert flags == f"-Cprofile-use={tree / 'pgo' / 'schedlab.profdata'}"
    assert name.startswith("pgo/schedlab.profdata (") and rustc in name
    assert said.startswith("pgo: profile-guided build with ")
    # Flags the caller set are kept.
    flags, _, _ = env_of(tree, RUSTFLAGS="-Cdebuginfo=1")
    assert flags.startswith("-Cdebuginfo=1 -Cprofile-use=")
    # And the way out.
    flags, name, said = env_of(tree, SCHEDLAB_NO_PGO="1")
    assert (flags, name) == ("", "") and "plain build" in said


@needs_rustc
def test_profile_of_another_rustc_gives_a_plain_build(tmp_path):
    tree = copy_tree(tmp_path)
    profile = tree / "pgo" / "PROFILE"
    lines = ["rustc: rustc 0.0.1 (000000000 1970-01-01)" if ln.startswith("rustc: ") else ln
             for ln in profile.read_text().splitlines()]
    profile.write_text("\n".join(lines) + "\n")
    flags, name, said = env_of(tree)
    assert (flags, name) == ("", "")
    assert "made by 'rustc 0.0.1" in said and "a plain build" in said


def test_no_profile_gives_a_plain_build(tmp_path):
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "pgo_env.sh", tmp_path / "scripts")
    flags, name, said = env_of(tmp_path)
    assert (flags, name) == ("", "") and "no profile" in said


@needs_rustc
def test_the_installed_module_is_built_as_pgo_env_says():
    """setup.sh builds the module the way pgo_env.sh decides: with this tree's profile where it
    applies (a module built by hand with a bare `maturin develop` fails here: rebuild it with
    `source scripts/pgo_env.sh` first, or set SCHEDLAB_NO_PGO=1 for a plain one)."""
    from schedlab import _native

    plain = os.environ.get("SCHEDLAB_NO_PGO") == "1"
    _, name, said = env_of(ROOT, **({"SCHEDLAB_NO_PGO": "1"} if plain else {}))
    assert _native.PGO_PROFILE == name, said
