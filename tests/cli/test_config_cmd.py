"""``tammi-rl config``: the resolved config as YAML, each key's doc and who set it; clean errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tammi_rl.cli import main
from tammi_rl.cli.config_cmd import one_line
from tammi_rl.config import config_from_dict, describe_fields, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SHIPPED = sorted(CONFIGS.glob("*.yaml"))
KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>\w+):(?P<value>.*?) +# (?P<mark>[*+ ]) (?P<doc>.*)$")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def key_lines(out: str) -> dict[str, tuple[str, str, str]]:
    """Dotted key -> (value text, mark, doc) for every line of the output that holds a value."""
    found: dict[str, tuple[str, str, str]] = {}
    sections: list[str] = []
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        m = KEY_LINE.match(line)
        assert m, f"not a key line: {line!r}"
        depth = len(m["indent"]) // 2
        sections = sections[:depth]
        if m["value"].strip():
            found[".".join([*sections, m["key"]])] = (m["value"].strip(), m["mark"], m["doc"])
        else:
            sections.append(m["key"])
    return found


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_output_is_the_resolved_config_as_yaml(capsys, path):
    code, out, err = run(capsys, str(path))
    assert code == 0 and err == ""
    assert config_from_dict(yaml.safe_load(out)) == load_config(path)


# A config of its own, so the marks below do not move when a shipped recipe changes.
MARKED_CONFIG = """\
variant: italian
runtime: auto
network:
  blocks: 3
  channels: 32
mcts:
  play_forced_hops: false
selfplay:
  max_plies: 250
train:
  iterations: 500
  hours: 0
eval:
  every: 250
"""


@pytest.fixture
def marked_config(tmp_path) -> Path:
    path = tmp_path / "marked.yaml"
    path.write_text(MARKED_CONFIG)
    return path


def test_every_key_has_its_doc_and_the_file_keys_are_marked(capsys, marked_config):
    code, out, _ = run(capsys, str(marked_config))
    assert code == 0
    lines = key_lines(out)
    docs = {key: doc for key, _, _, doc in describe_fields()}
    assert list(lines) == list(docs)  # every key, in declaration order
    for key, (_, _, doc) in lines.items():
        assert doc == one_line(docs[key]) and docs[key].startswith(doc)
    marked = {key for key, (_, mark, _) in lines.items() if mark == "*"}
    assert marked == {
        "variant",
        "runtime",
        "network.blocks",
        "network.channels",
        "mcts.play_forced_hops",
        "selfplay.max_plies",
        "train.iterations",
        "train.hours",
        "eval.every",
    }
    assert lines["train.hours"][0] == "0.0" and lines["mcts.simulations"] == ("32", " ", lines["mcts.simulations"][2])
    assert "* set by the file (9), + set by an override (0)" in out.splitlines()[1]


def test_overrides_win_and_are_marked(capsys, marked_config):
    overrides = ["train.hours=0.5", "mcts.simulations=64", "eval.alphabeta_depths=[1]"]
    code, out, err = run(capsys, str(marked_config), *overrides)
    assert code == 0 and err == ""
    lines = key_lines(out)
    assert lines["train.hours"][:2] == ("0.5", "+")  # the file sets it too: the override wins
    assert lines["mcts.simulations"][:2] == ("64", "+")
    assert lines["eval.alphabeta_depths"][:2] == ("[1]", "+")
    assert lines["train.iterations"][:2] == ("500", "*")
    assert "with 3 overrides" in out.splitlines()[0]
    assert config_from_dict(yaml.safe_load(out)) == load_config(marked_config, overrides)


def test_a_retired_key_warns_and_marks_the_key_that_replaced_it(capsys, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("distributed:\n  max_restarts: 7\n")
    code, out, err = run(capsys, str(path))
    assert code == 0
    assert "warning" in err and "distributed.max_restarts" in err and "Traceback" not in err
    assert key_lines(out)["selfplay.max_restarts"][:2] == ("7", "*")


def test_strings_that_look_like_other_types_stay_strings(capsys, tmp_path):
    path = tmp_path / "names.yaml"
    path.write_text("name: 'on'\nruns_dir: '1e3'\n")
    code, out, _ = run(capsys, str(path))
    assert code == 0
    cfg = config_from_dict(yaml.safe_load(out))
    assert (cfg.name, cfg.runs_dir) == ("on", "1e3")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["missing.yaml"], "missing.yaml: cannot read config"),
        (["{italian}", "mcts.sims=3"], "unknown key 'mcts.sims'"),
        (["{italian}", "mcts.simulations=0"], "key 'mcts.simulations': must be >= 1"),
        (["{italian}", "bogus"], "override 'bogus' must look like key.sub=value"),
        (["{bad}"], "unknown key 'colour'"),
    ],
)
def test_errors_are_one_clean_line(capsys, tmp_path, argv, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text("colour: red\n")
    argv = [a.format(italian=CONFIGS / "italian.yaml", bad=bad) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tammi-rl: error: ") and message in err and "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_config_is_required(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "required: CONFIG" in err
