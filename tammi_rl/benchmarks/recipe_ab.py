"""A recipe A/B as the results page reports them: arms trained side by side, then rated.

    python -m tammi_rl.benchmarks.recipe_ab configs/russian.yaml --out ab/targets --hours 1.25 \\
        --set train.replay_ratio=2 \\
        --arm base \\
        --arm "bundle network.ownership=true network.short_value=true network.opponent_policy=true"

An arm is a name and the config overrides that make it (none for the base, the first arm).
Every arm trains at once, from the same seed (a round per seed with ``--seeds``, below), with
one self-play worker and the same ``train.hours``, so all see the same machine for the same
time; then each final network plays ``--games`` colour-paired games at ``--sims`` simulations
against alpha-beta at each of ``--depths``, against each ``--vs NAME=SPEC`` (any player spec:
the shipped model, another A/B's base run) and, for every arm but the base, against the base:
``tammi-rl eval`` runs, at most ``--jobs`` at a time (one a core: a match is single-threaded).
The report, printed and written to ``OUT/report.md``, gives per arm its games, learner steps,
the CPU time its training took, in-training ladder and every rating with W/D/L, the 95% CI and
both sides' seconds a move; then each arm's score minus the base's against every opponent both
met, paired opening by opening (`tammi_rl.eval.paired`), whose interval is narrower than the
two scores' own.

Side by side, the OS shares the cores by runnable processes, not by arm: an arm whose learner
never waits for self-play takes more of the machine than one whose learner does (in the
progressive-simulations A/B, 1.12x the base's CPU over the first 17 minutes). ``--pin``
gives each arm its own equal set of cores, so every arm gets the same CPU; the CPU column
shows what each arm used either way.

One run per arm is one draw of how a recipe trains: two runs of the recipe from two seeds
land as far apart as many recipe changes (results.md, "Two seeds of one recipe").
``--seeds 0 1`` trains every arm once per seed, as ``ARM-s0``, ``ARM-s1``: a round per seed,
the arms of a round side by side as above. Each run meets the base of its own seed, and the
report adds, per arm, its head-to-head score and its paired differences pooled over the
seeds, with each seed's own figure beside them, so a change shows whether it holds from both.

Everything lands in ``--out``: ``runs/ARM`` (the run directories; ``runs/ARM-sS`` with
``--seeds``), ``rate/ARM-vs-OPPONENT`` (each rating's games and summary) and the logs. Run the
same command again after a stop and it goes on: a run with a checkpoint resumes, a finished
run (its iterations done or its budget spent) is not started again, so its CPU column stays
what its training took, and a rating with a summary is not played again. A run is found by
its name, so a run trained without ``--seeds`` is not taken for ``ARM-s0``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tammi_rl.eval.paired import AgentGames, PairingError, compare, mean_interval
from tammi_rl.legacy import upgrade_checkpoint_config
from tammi_rl.players import PLAYER_KINDS, PlayerSpec, PlayerSpecError
from tammi_rl.store.checkpoint import load_checkpoint


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its name (its run's name) and the overrides that make it."""

    name: str
    overrides: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> ArmSpec:
        """``"NAME key=value ..."``: a name that is a plain word, then the arm's overrides."""
        words = text.split()
        if not words or "=" in words[0] or "/" in words[0]:
            raise ValueError(f"--arm {text!r}: start with the arm's name, then its key=value overrides")
        bad = [w for w in words[1:] if "=" not in w]
        if bad:
            raise ValueError(f"--arm {text!r}: {bad[0]!r} is not a key=value override")
        return cls(words[0], tuple(words[1:]))


def seeded_rounds(arms: list[ArmSpec], seeds: list[int] | None, shared: tuple[str, ...] = ()) -> list[list[ArmSpec]]:
    """The runs to train, a round per seed, each round's base first: ``ARM-sS`` with ``seed=S``
    ahead of the arm's overrides. With no ``seeds``, one round, the arms as given (the config's
    seed). ``shared`` (the ``--set`` overrides) and the arms must leave the seed to ``seeds``."""
    if not seeds:
        return [list(arms)]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds must differ, got {seeds}")
    if any(s < 0 for s in seeds):
        raise ValueError(f"--seeds: a seed is a whole number >= 0, got {seeds}")
    if any(o.split("=", 1)[0] == "seed" for o in shared):
        raise ValueError("--set sets seed; with --seeds every arm trains from each seed")
    for arm in arms:
        if any(o.split("=", 1)[0] == "seed" for o in arm.overrides):
            raise ValueError(f"--arm {arm.name!r} sets seed; with --seeds every arm trains from each seed")
    return [[ArmSpec(f"{a.name}-s{s}", (f"seed={s}", *a.overrides)) for a in arms] for s in seeds]


@dataclass(frozen=True)
class Opponent:
    """An opponent every arm meets besides alpha-beta and the base: a name (its report column)
    and a player spec, e.g. ``shipped=mcts:model=turkish,sims=800``."""

    name: str
    spec: str

    @classmethod
    def parse(cls, text: str) -> Opponent:
        """``"NAME=SPEC"``: a plain word other than ``base`` or ``dD``, then a player spec."""
        name, eq, spec = text.partition("=")
        name, spec = name.strip(), spec.strip()
        if not eq or not name.isidentifier() or not spec:
            raise ValueError(f"--vs {text!r}: give NAME=SPEC, a plain word then a player spec")
        if name == "base" or (name[0] == "d" and name[1:].isdigit()):
            raise ValueError(f"--vs {text!r}: the name {name!r} is the base's or a depth's column; pick another")
        try:  # read the spec now, not after the arms have trained
            kind = PlayerSpec.parse(spec).kind
        except PlayerSpecError as exc:
            raise ValueError(f"--vs {text!r}: {exc}") from exc
        if kind not in PLAYER_KINDS:
            raise ValueError(f"--vs {text!r}: unknown player kind {kind!r}; known: {', '.join(sorted(PLAYER_KINDS))}")
        return cls(name, spec)


@dataclass(frozen=True)
class Rating:
    """One rated match of an arm's final network, from its ``tammi-rl eval`` summary."""

    opponent: str
    wins: int
    draws: int
    losses: int
    score: float
    low: float
    high: float
    seconds: float
    """The arm's seconds a move."""
    opponent_seconds: float
    games: AgentGames | None = None
    """The arm's per-game scores and openings, for the paired comparison with the base."""

    @classmethod
    def from_summary(cls, path: Path) -> Rating:
        summary = json.loads(path.read_text())
        m = summary["matches"][0]
        return cls(
            m["opponent"],
            m["wins"],
            m["draws"],
            m["losses"],
            m["score"],
            m["score_ci_low"],
            m["score_ci_high"],
            m["seconds_per_move"],
            m["opponent_seconds_per_move"],
            AgentGames.from_summary(summary, m["opponent"], str(path)),
        )

    def cell(self) -> str:
        return f"{self.score:.3f} ({self.wins}/{self.draws}/{self.losses}, CI {self.low:.3f}-{self.high:.3f})"


@dataclass
class ArmResult:
    """What an arm's run made and how its final network rated."""

    name: str
    games: int
    learner_steps: int
    ladder: dict[int, float]
    ratings: dict[str, Rating] = field(default_factory=dict)
    """By the rating's key: ``dD`` against alpha-beta depth D, ``base`` against the base arm, an
    `Opponent`'s name against it."""
    cpu_seconds: float | None = None
    """CPU time (user and system, its workers included) its training took, every session of it."""


@dataclass(frozen=True)
class Job:
    """A command to run, its log, the cores it may use (None: any) and the file that adds up
    its CPU seconds (None: not counted)."""

    command: list[str]
    log: Path
    cores: frozenset[int] | None = None
    cpu_file: Path | None = None


def core_shares(arms: int, cores: list[int]) -> list[frozenset[int]]:
    """Equal, disjoint shares of ``cores``, one per arm (``--pin``); cores left over go unused."""
    if arms > len(cores):
        raise ValueError(f"--pin: {arms} arms need at least {arms} cores, this process may use {len(cores)}")
    per = len(cores) // arms
    return [frozenset(cores[i * per : (i + 1) * per]) for i in range(arms)]


def add_cpu_seconds(path: Path, seconds: float) -> float:
    """Add ``seconds`` to the total kept in ``path`` (a resumed run adds to its earlier sessions)."""
    total = (float(path.read_text()) if path.is_file() else 0.0) + seconds
    path.write_text(f"{total:.3f}\n")
    return total


def train_command(config: str, arm: ArmSpec, out: Path, common: list[str]) -> list[str]:
    """The command that trains ``arm``, or resumes its run when it has a checkpoint."""
    run = out / "runs" / arm.name
    cli = [sys.executable, "-m", "tammi_rl.cli", "train"]
    if (run / "checkpoints" / "latest.pt").is_file():
        return [*cli, "--resume", str(run)]
    where = [f"name={arm.name}", f"runs_dir={out / 'runs'}", f"checkpoints_dir={out / 'checkpoints'}"]
    return [*cli, config, *where, "selfplay.workers=1", *common, *arm.overrides]


def run_is_finished(run: Path) -> bool:
    """Whether the run in ``run`` has nothing left to train: its latest checkpoint has done its
    ``train.iterations`` or ended on its ``train.hours`` budget (what ``train --resume`` checks)."""
    latest = run / "checkpoints" / "latest.pt"
    if not latest.is_file():
        return False
    ckpt = load_checkpoint(latest)
    counters = ckpt["counters"]
    iterations = int(upgrade_checkpoint_config(ckpt.get("config"))["train"]["iterations"])
    return int(counters["iteration"]) >= iterations or bool(counters.get("budget_spent"))


def rating_jobs(
    rounds: list[list[ArmSpec]], out: Path, depths: list[int], sims: int, opponents: tuple[Opponent, ...] = ()
) -> list[tuple[str, str, str]]:
    """(run, key, opponent spec) of every rating: each run against each depth and each of
    ``opponents``, then every run but a round's base against that round's base."""
    runs = [arm for arms in rounds for arm in arms]
    jobs = [(arm.name, f"d{d}", f"alphabeta:depth={d}") for arm in runs for d in depths]
    jobs += [(arm.name, o.name, o.spec) for arm in runs for o in opponents]
    for arms in rounds:
        base = arms[0].name
        spec = f"mcts:checkpoint={out / 'runs' / base},sims={sims},name={base}"
        jobs += [(arm.name, "base", spec) for arm in arms[1:]]
    return jobs


def eval_command(arm: str, key: str, spec: str, out: Path, games: int, sims: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tammi_rl.cli",
        "eval",
        str(out / "runs" / arm),
        "--vs",
        spec,
        "--games",
        str(games),
        "--sims",
        str(sims),
        "--quiet",
        "--out",
        str(out / "rate" / f"{arm}-vs-{key}"),
    ]


def start(job: Job) -> subprocess.Popen:
    """Start ``job`` on its cores, its output to its log."""
    job.log.parent.mkdir(parents=True, exist_ok=True)
    cores = job.cores
    pin = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
    with job.log.open("w") as f:
        return subprocess.Popen(job.command, stdout=f, stderr=subprocess.STDOUT, preexec_fn=pin)


def reap(proc: subprocess.Popen, job: Job, block: bool = False) -> bool:
    """Whether ``proc`` has ended (waiting for it if ``block``); when it has, set its return code
    and add its CPU time, its reaped children's included, to ``job.cpu_file``."""
    pid, status, usage = os.wait4(proc.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return False
    proc.returncode = os.waitstatus_to_exitcode(status)
    if job.cpu_file is not None:
        add_cpu_seconds(job.cpu_file, usage.ru_utime + usage.ru_stime)
    return True


def run_all(commands: list[Job], jobs: int) -> None:
    """Run ``commands``, ``jobs`` at a time; raise naming the first that failed (the others are
    stopped: a training run resumes, a rating replays, on the next call)."""
    waiting = list(commands)
    running: list[tuple[subprocess.Popen, Job]] = []
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                job = waiting.pop(0)
                running.append((start(job), job))
            for proc, job in list(running):
                if reap(proc, job):
                    running.remove((proc, job))
                    if proc.returncode != 0:
                        raise RuntimeError(f"{' '.join(job.command)} failed (exit {proc.returncode}); see {job.log}")
            time.sleep(0.5)
    finally:
        for proc, job in running:
            stop(proc, job)


def stop(proc: subprocess.Popen, job: Job) -> None:
    """End ``job``'s process and count its CPU. A process that has already exited is reaped as it
    is: ``Popen.terminate`` would reap it first, behind `reap`'s back, and lose its CPU time."""
    if not reap(proc, job):
        os.kill(proc.pid, signal.SIGTERM)  # an exited, unreaped process takes the signal harmlessly
        reap(proc, job, block=True)


def arm_result(arm: str, out: Path, keys: list[str]) -> ArmResult:
    """An arm's counters from its run's latest checkpoint and its ratings' summaries."""
    ckpt = load_checkpoint(out / "runs" / arm / "checkpoints" / "latest.pt")
    c = ckpt["counters"]
    ladder = {int(d): float(s) for d, s in c.get("eval_scores", {}).items()}
    cpu = cpu_file(out, arm)
    cpu_seconds = float(cpu.read_text()) if cpu.is_file() else None
    result = ArmResult(arm, int(c["games"]), int(ckpt["learner"]["step"]), ladder, cpu_seconds=cpu_seconds)
    for key in keys:
        summary = out / "rate" / f"{arm}-vs-{key}" / "summary.json"
        if summary.is_file():
            result.ratings[key] = Rating.from_summary(summary)
    return result


def cpu_file(out: Path, arm: str) -> Path:
    """Where an arm's training CPU seconds add up."""
    return out / "logs" / f"cpu-{arm}.txt"


def rating_keys(depths: list[int], opponents: tuple[Opponent, ...] = ()) -> list[str]:
    """Every rating's key, in the report's column order: the base, the depths, the opponents."""
    return ["base", *(f"d{d}" for d in depths), *(o.name for o in opponents)]


def report(
    rounds: list[list[ArmResult]],
    depths: list[int],
    opponents: tuple[Opponent, ...] = (),
    arms: list[str] | None = None,
) -> str:
    """The A/B as a markdown table, both sides' seconds a move in each rating, each run paired
    with its round's base and, over several rounds (seeds), each of ``arms`` pooled over them."""
    runs = [r for results in rounds for r in results]
    base = rounds[0][0].name if len(rounds) == 1 else "its seed's base"
    head = ["arm", "games", "learner steps", "training CPU h", "ladder at the end", f"head to head vs {base}"]
    head += [f"vs depth {d}" for d in depths] + [f"vs {o.name}" for o in opponents]
    keys = rating_keys(depths, opponents)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in runs:
        ladder = " / ".join(f"d{d} {s:.2f}" for d, s in sorted(r.ladder.items())) or "-"
        cpu = "-" if r.cpu_seconds is None else f"{r.cpu_seconds / 3600:.2f}"
        cells = [r.name, f"{r.games:,}", f"{r.learner_steps:,}", cpu, ladder]
        cells += [r.ratings[k].cell() if k in r.ratings else "" for k in keys]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Seconds a move, the arm / its opponent:")
    for r in runs:
        times = ", ".join(f"{k} {x.seconds:.3f}/{x.opponent_seconds:.3f}" for k, x in r.ratings.items())
        lines.append(f"- {r.name}: {times or '-'}")
    paired = [line for results in rounds for r in results[1:] if (line := paired_line(results[0], r, keys[1:]))]
    if paired:
        lines.append("")
        lines.append(f"Paired with {base} (same openings, same opponent; the arm's score minus {base}'s):")
        lines += paired
    if len(rounds) > 1 and arms:
        lines.append("")
        lines.append("Over the seeds (each seed's run against that seed's base, pooled; each seed's figure after it):")
        bases = [results[0] for results in rounds]
        for i, arm in enumerate(arms[1:], start=1):
            lines.append(pooled_line(arm, bases, [results[i] for results in rounds], keys))
    return "\n".join(lines) + "\n"


def paired_line(base: ArmResult, arm: ArmResult, keys: list[str]) -> str | None:
    """``- ARM: d6 +0.045 (95% CI ...), ...`` over the ratings both played, or None if none."""
    cells = []
    for key in keys:
        a, b = base.ratings.get(key), arm.ratings.get(key)
        if a is None or b is None or a.games is None or b.games is None:
            continue
        try:
            cells.append(f"{key} {compare(a.games, b.games)}")
        except PairingError as exc:
            cells.append(f"{key} not paired: {exc}")
    return f"- {arm.name}: " + ", ".join(cells) if cells else None


def pooled_line(arm: str, bases: list[ArmResult], runs: list[ArmResult], keys: list[str]) -> str:
    """``- ARM: base 0.545 (W/D/L, CI ...; 0.570, 0.520), d6 -0.030 (95% CI ...; -0.070, +0.010)``:
    the head-to-head score and the paired differences over the seeds' games together, each
    seed's own after them; a rating some seed lacks, or cannot pair, says so."""
    cells = []
    h2h = [x for r in runs if (x := r.ratings.get("base")) is not None]
    h2h_games = [x.games for x in h2h if x.games is not None]
    if len(h2h_games) == len(runs):
        wins, draws, losses = (sum(getattr(x, f) for x in h2h) for f in ("wins", "draws", "losses"))
        score, low, high = pooled_score(h2h_games)
        each = ", ".join(f"{x.score:.3f}" for x in h2h)
        cells.append(f"base {score:.3f} ({wins}/{draws}/{losses}, CI {low:.3f}-{high:.3f}; {each})")
    for key in keys[1:]:
        pairs = [(b.ratings.get(key), r.ratings.get(key)) for b, r in zip(bases, runs, strict=True)]
        games = [(a.games, b.games) for a, b in pairs if a and b and a.games and b.games]
        if not games:
            continue  # no seed has it: not a rating of this A/B
        if len(games) < len(pairs):
            missing = ", ".join(r.name for r, (a, b) in zip(runs, pairs, strict=True) if not (a and b))
            cells.append(f"{key} not pooled: {missing} or its base has no rating with its games")
            continue
        try:
            each = ", ".join(f"{compare(a, b).mean:+.3f}" for a, b in games)
            pooled = compare(pooled_games([a for a, _ in games]), pooled_games([b for _, b in games]))
        except PairingError as exc:
            cells.append(f"{key} not pooled: {exc}")
            continue
        lo, hi = pooled.low, pooled.high
        cells.append(f"{key} {pooled.mean:+.3f} (95% CI {lo:+.3f}..{hi:+.3f}, {pooled.pairs} opening pairs; {each})")
    return f"- {arm}: " + (", ".join(cells) or "no rating to pool")


def pooled_games(matches: list[AgentGames]) -> AgentGames:
    """One agent's games against one opponent over several runs, one run's after another's."""
    first = matches[0]
    scores = tuple(s for m in matches for s in m.scores)
    return AgentGames(first.agent, first.opponent, scores, tuple(o for m in matches for o in m.openings))


def pooled_score(matches: list[AgentGames]) -> tuple[float, float, float]:
    """Mean score over the games of ``matches`` and its normal 95% interval over the colour
    pairs of each match (games ``2k`` and ``2k + 1``, the unit `tammi_rl.eval.paired` counts in)."""
    pairs = [(m.scores[i] + m.scores[i + 1]) / 2 for m in matches for i in range(0, len(m.scores) - 1, 2)]
    mean, low, high = mean_interval(pairs)
    return mean, max(0.0, low), min(1.0, high)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the config every arm starts from, e.g. configs/russian.yaml")
    parser.add_argument("--arm", action="append", required=True, help='"NAME [key=value ...]"; the first is the base')
    parser.add_argument("--out", required=True, type=Path, help="directory for the runs, ratings and report")
    parser.add_argument("--hours", type=float, help="train.hours of every arm (default: the config's)")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="overrides of every arm")
    parser.add_argument("--games", type=int, default=100, help="games per rating (default 100)")
    parser.add_argument("--sims", type=int, default=800, help="simulations a hop in the ratings (default 800)")
    parser.add_argument("--depths", type=int, nargs="+", default=[6, 8], help="alpha-beta depths (default 6 8)")
    parser.add_argument(
        "--vs",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="another opponent for every arm, e.g. shipped=mcts:model=turkish,sims=800 (repeatable)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="ratings at a time (default: cores)")
    parser.add_argument(
        "--pin", action="store_true", help="train each arm on its own equal share of the cores (same CPU for every arm)"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        metavar="SEED",
        help="train every arm once per seed, a round per seed (default: once, from the config's seed)",
    )
    args = parser.parse_args(argv)
    try:
        arms = [ArmSpec.parse(text) for text in args.arm]
        rounds = seeded_rounds(arms, args.seeds, tuple(args.set))
        if args.seeds and args.games % 2:
            raise ValueError(
                f"--games {args.games}: with --seeds the games pool by colour pair, so give an even number"
            )
        opponents = tuple(Opponent.parse(text) for text in args.vs)
        cores: list[frozenset[int] | None] = [None] * len(arms)
        if args.pin:
            cores = list(core_shares(len(arms), sorted(os.sched_getaffinity(0))))
    except ValueError as exc:
        parser.error(str(exc))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        parser.error(f"arm names must differ, got {names}")
    if len({o.name for o in opponents}) != len(opponents):
        parser.error(f"--vs names must differ, got {[o.name for o in opponents]}")
    common = [*args.set, *([f"train.hours={args.hours}"] if args.hours is not None else [])]
    out: Path = args.out
    pinned = f", each on cores {', '.join(str(sorted(c or ())) for c in cores)}" if args.pin else ""
    for runs in rounds:
        print(f"training {len(runs)} arms side by side: {', '.join(a.name for a in runs)}{pinned}", flush=True)
        training = [
            Job(
                train_command(args.config, a, out, common),
                out / "logs" / f"train-{a.name}.log",
                c,
                cpu_file(out, a.name),
            )
            for a, c in zip(runs, cores, strict=True)
            if not run_is_finished(out / "runs" / a.name)
        ]
        if len(training) < len(runs):
            print(f"{len(runs) - len(training)} of {len(runs)} runs already finished: not started again", flush=True)
        run_all(training, len(runs))
    jobs = rating_jobs(rounds, out, args.depths, args.sims, opponents)
    todo = [j for j in jobs if not (out / "rate" / f"{j[0]}-vs-{j[1]}" / "summary.json").is_file()]
    print(f"rating: {len(todo)} of {len(jobs)} matches to play, {args.jobs} at a time", flush=True)
    commands = [
        Job(eval_command(arm, key, spec, out, args.games, args.sims), out / "logs" / f"rate-{arm}-vs-{key}.log")
        for arm, key, spec in todo
    ]
    run_all(commands, max(1, args.jobs))
    keys = rating_keys(args.depths, opponents)
    results = [[arm_result(a.name, out, keys) for a in runs] for runs in rounds]
    text = report(results, args.depths, opponents, names)
    (out / "report.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
