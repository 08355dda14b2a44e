"""Where `eval`, `match` and `play` write by default: the current directory, never beside
their input (a shipped model lives inside the installed package), and never over an
earlier result (``_2``, ``_3``, ... is added)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.tiny_checkpoint import TINY_NETWORK, tiny_checkpoint

from tammi_rl.cli import main
from tammi_rl.cli.outputs import default_output
from tammi_rl.config import Config
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import read_pdn
from tammi_rl.store import shipped
from tammi_rl.store.checkpoint import save_checkpoint
from tammi_rl.store.rundir import RunDir

EVAL_FAST = ["--vs", "random", "--games", "2", "--sims", "2", "--max-plies", "16", "--quiet"]


def _files(directory: Path) -> set[Path]:
    return set(directory.rglob("*"))


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    return here.resolve()


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, russian: Rules) -> Path:
    """A stand-in for the installed package's checkpoints folder, holding russian.pt."""
    models = tmp_path / "site-packages" / "tammi_rl" / "checkpoints"
    models.mkdir(parents=True)
    save_checkpoint(models / "russian.pt", tiny_checkpoint(russian, 1, games=4))
    monkeypatch.setattr(shipped, "models_dir", lambda: models)
    return models


def test_default_output_never_takes_a_used_name(cwd: Path) -> None:
    assert default_output("eval_russian") == Path("eval_russian")
    Path("eval_russian").mkdir()
    Path("eval_russian_2").mkdir()
    assert default_output("eval_russian") == Path("eval_russian_3")
    Path("match_russian.pdn").touch()
    assert default_output("match_russian", ".pdn") == Path("match_russian_2.pdn")
    assert default_output("eval_a/b (c)") == Path("eval_a_b_c")  # a name, never a path


@pytest.mark.slow
def test_eval_of_a_shipped_model_writes_in_the_current_directory(cwd: Path, package: Path, capsys) -> None:
    before = _files(package)
    assert main(["eval", "russian", *EVAL_FAST]) == 0
    out = cwd / "eval_russian"
    assert {p.name for p in out.iterdir()} == {"games.pdn", "summary.json", "summary.csv"}
    assert f"written to {out}" in capsys.readouterr().out
    assert _files(package) == before
    assert main(["eval", "russian", *EVAL_FAST]) == 0  # again: a new folder, the first one kept
    assert (cwd / "eval_russian_2" / "summary.json").is_file()


@pytest.mark.slow
def test_eval_of_a_checkpoint_or_a_run_writes_in_the_current_directory(cwd: Path, tmp_path: Path, russian) -> None:
    run = RunDir(tmp_path / "runs" / "tiny")
    run.prepare(Config(network=TINY_NETWORK), resume=False)
    for it in (1, 2):
        run.save_checkpoint(tiny_checkpoint(russian, it, games=4 * it), it, keep=5)
    before = _files(run.root)
    assert main(["eval", str(run.checkpoints_dir / "ckpt_000001.pt"), *EVAL_FAST]) == 0
    assert json.loads((cwd / "eval_ckpt_000001" / "summary.json").read_text())["mode"] == "single"
    assert main(["eval", str(run.root), *EVAL_FAST]) == 0
    assert (cwd / "eval_tiny" / "games.pdn").is_file()
    assert main(["eval", str(run.root), "--gauntlet", "--no-neighbours", *EVAL_FAST]) == 0
    assert (cwd / "gauntlet_tiny" / "ladder.csv").is_file()
    assert _files(run.root) == before  # nothing written beside the checkpoints


def test_eval_out_is_used_as_given(cwd: Path, package: Path, tmp_path: Path) -> None:
    assert main(["eval", "russian", *EVAL_FAST, "--out", str(tmp_path / "mine")]) == 0
    assert (tmp_path / "mine" / "summary.csv").is_file()
    assert list(cwd.iterdir()) == []


def test_match_saves_its_games_in_the_current_directory(cwd: Path, capsys) -> None:
    argv = ["match", "english", "random:seed=1", "random:seed=2", "--games", "2", "--max-plies", "12", "--quiet"]
    assert main(argv) == 0
    assert len(read_pdn((cwd / "match_english.pdn").read_text())) == 2
    assert f"2 games written to {cwd / 'match_english.pdn'}" in capsys.readouterr().out
    assert main(argv) == 0
    assert (cwd / "match_english_2.pdn").is_file()
    assert main([*argv, "--out", "sub/games.pdn"]) == 0
    assert (cwd / "sub" / "games.pdn").is_file()


def test_play_saves_its_game_in_the_current_directory(cwd: Path, capsys) -> None:
    argv = ["play", "russian", "--white", "random:seed=1", "--black", "random:seed=2", "--max-plies", "4"]
    assert main(argv) == 0
    assert len(read_pdn((cwd / "play_russian.pdn").read_text())[0].moves) == 4
    assert f"game written to {cwd / 'play_russian.pdn'}" in capsys.readouterr().out
    assert main([*argv, "--pdn", "g.pdn"]) == 0  # the old spelling of --out
    assert (cwd / "g.pdn").is_file() and not (cwd / "play_russian_2.pdn").exists()


@pytest.mark.parametrize("command", ["eval", "match", "play"])
def test_help_names_the_default_output(command: str, capsys) -> None:
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "in the current directory" in text and "--out" in text
