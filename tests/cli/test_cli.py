"""The tammi-rl command line: perft, legal, variants, and clean errors (status 2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tammi_rl.cli import COMMANDS, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "variant, depth, total",
    [("russian", 4, 1469), ("turkish", 4, 7538), ("english", 4, 1469), ("international", 4, 4265)],
)
def test_perft_last_line(capsys, variant: str, depth: int, total: int) -> None:
    code, out, err = run(capsys, "perft", variant, str(depth))
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == str(total)


def test_perft_divide_sums_to_total(capsys) -> None:
    code, out, _ = run(capsys, "perft", "russian", "4", "--divide")
    lines = out.splitlines()
    assert code == 0 and lines[-1] == "1469"
    counts = dict(line.split() for line in lines[:-1])
    assert set(counts) == {"a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4"}
    assert sum(int(c) for c in counts.values()) == 1469


def test_perft_from_fen(capsys) -> None:
    # The English two-route position: both 30x21x14 and 30x23x14 count.
    code, out, _ = run(capsys, "perft", "english", "1", "--fen", "W:W30:B25,26,17,18", "--divide")
    assert code == 0
    lines = out.splitlines()
    assert sorted(lines[:-1]) == ["30x21x14 1", "30x23x14 1"]
    assert lines[-1] == "2"


def test_legal_json_numeric_and_algebraic(capsys) -> None:
    code, out, _ = run(capsys, "legal", "english", "--fen", "W:W30:B25,26,17,18")
    assert code == 0
    moves = json.loads(out)
    assert sorted(moves, key=lambda m: m["path"]) == [
        {"path": [30, 21, 14], "captures": [25, 17]},
        {"path": [30, 23, 14], "captures": [26, 18]},
    ]
    code, out, _ = run(capsys, "legal", "russian", "--fen", "W:Wc3:Bd4,d6")
    assert json.loads(out) == [{"path": ["c3", "e5", "c7"], "captures": ["d4", "d6"]}]
    code, out, _ = run(capsys, "legal", "russian")
    assert len(json.loads(out)) == 7


def test_variants_lists_gym_ids(capsys) -> None:
    code, out, _ = run(capsys, "variants")
    assert code == 0
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert rows["russian"] == "tammi/Russian-v0"
    assert set(rows) >= {"russian", "english", "italian", "turkish", "brazilian", "international"}


def test_variant_file_path(capsys, tmp_path: Path) -> None:
    spec = tmp_path / "mini.toml"
    shipped = Path(__file__).parents[2] / "envs" / "russian.toml"
    spec.write_text(shipped.read_text().replace("russian", "mini"))
    code, out, _ = run(capsys, "perft", str(spec), "3")
    assert code == 0 and out.splitlines()[-1] == "302"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["perft", "checkers9", "3"], "unknown variant 'checkers9'"),
        (["perft", "russian", "2", "--fen", "W:Wz9:Bc7"], "unknown square 'z9'"),
        (["legal", "russian", "--fen", "nonsense"], "FEN 'nonsense'"),
        (["legal", "/no/such/file.toml"], "cannot read variant file"),
    ],
)
def test_errors_exit_2_with_one_line_message(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tammi-rl: error: ") and needle in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_bad_variant_file_names_key(capsys, tmp_path: Path) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "bad"\nking_range = "sideways"\n')
    code, _, err = run(capsys, "perft", str(spec), "1")
    assert code == 2
    assert "key 'king_range'" in err and "short, flying" in err


def test_usage_errors_and_help(capsys) -> None:
    code, _, err = run(capsys, "perft", "russian", "-3")
    assert code == 2 and "depth must be 0 or more" in err
    code, _, err = run(capsys, "fly")
    assert code == 2 and "invalid choice" in err
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in COMMANDS:
        assert command.name in out


def _script() -> str | None:
    beside = Path(sys.executable).parent / "tammi-rl"
    return str(beside) if beside.exists() else shutil.which("tammi-rl")


@pytest.mark.slow
@pytest.mark.skipif(_script() is None, reason="tammi-rl console script not installed (pip install -e .)")
def test_installed_script() -> None:
    ok = subprocess.run([_script(), "perft", "russian", "3"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.splitlines()[-1] == "302"
    bad = subprocess.run([_script(), "perft", "nowhere", "3"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.startswith("tammi-rl: error: unknown variant 'nowhere'")
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["legal", "russian", "--fen", "W:W:B"], "FEN 'W:W:B': no pieces at all"),
        (["legal", "russian", "--fen", "B:W:Bc3"], "white has no piece"),
        (["perft", "english", "2", "--fen", "W:W21:B"], "black has no piece"),
        (["legal", "russian", "--fen", ""], "--fen is empty: give a position such as 'W:Wa3,c3,Ke3:Bb8,d8,f8'"),
        (["perft", "english", "1", "--fen", " "], "such as 'W:W21,22,K23:B1,2,3', or leave --fen out for the start"),
        (["play", "russian", "--white", "random", "--black", "random", "--fen", ""], "--fen is empty"),
        (["play", "russian", "--white", "random", "--black", "random", "--fen", "W:Wc3:B"], "black has no piece"),
        (["legal", "russian", "--fen", "W:W21,22"], "e.g. 'W:Wa3,c3,Ke3:Bb8,d8,f8'"),
        (["legal", "turkish", "--fen", "nonsense"], "e.g. 'W:Wa3,b3,Kc3:Ba8,b8,c8'"),
        (["legal", "international", "--fen", "nonsense"], "e.g. 'W:W36,37,K38:B1,2,3'"),
    ],
)
def test_fen_set_ups_without_a_piece_or_empty_exit_2(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], needle: str
) -> None:
    """--fen "" is refused (leaving --fen out means the start); so is a side without pieces,
    which used to print [] or play a finished game; the example FEN is in the variant's notation."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (out, err)
    assert err.startswith("tammi-rl: error: ") and needle in err, err
    assert "Traceback" not in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # play saved no game


def test_match_on_a_missing_gpu_exits_2_with_one_line(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mcts:...,device=cuda where torch has no CUDA: one line naming the spec and the fix, not
    torch's traceback, and no match file."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "match", "russian", "mcts:model=russian,device=cuda", "random", "--games", "2")
    assert code == 2 and out == ""
    assert err.startswith("tammi-rl: error: player spec 'mcts:model=russian,device=cuda': device=cuda but CUDA")
    assert "use device=cpu" in err and "Traceback" not in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
