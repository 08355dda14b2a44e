"""A scripted Hub engine for tests of the hub player: ``python fake_hub_engine.py MODE LOG [MOVE]``.

Standard library only (it starts in a few milliseconds). It writes every line it reads
to LOG and answers ``go`` with ``done move=MOVE`` (default ``10-13``: c3-b4, a legal first
move on Russian and Brazilian boards), unless MODE says otherwise:

* ``play``: the normal answers (an ``info`` line, then ``done``);
* ``die``: exits with status 4 at ``go``, after a word on stderr;
* ``die-at-init``: exits with status 3 at ``init``, after a line on stdout;
* ``silent``: never answers ``go``;
* ``illegal``: answers ``done move=1-2``;
* ``error``: answers ``error message=...`` and ``done move=""``;
* ``warn``: answers ``error message=...`` and then the move;
* ``refuse``: answers every ``set-param`` with an ``error``;
* ``stubborn``: ignores ``quit`` and the end of its input (it must be terminated).
"""

import sys
import time


def main() -> int:
    mode, log_path = sys.argv[1], sys.argv[2]
    answer = sys.argv[3] if len(sys.argv) > 3 else "10-13"
    with open(log_path, "a", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            word = line.split()[0] if line.split() else ""
            if word == "hub":
                print("id name=fake version=1")
                print('param name=variant value=normal type=enum values="normal russian"')
                print("wait", flush=True)
            elif word == "set-param" and mode == "refuse":
                print('error message="no parameters here"', flush=True)
            elif word == "init":
                if mode == "die-at-init":
                    print("going away", flush=True)
                    return 3
                print("ready", flush=True)
            elif word == "go":
                if mode == "die":
                    print("crashed in the search", file=sys.stderr, flush=True)
                    return 4
                if mode == "silent":
                    continue
                if mode == "illegal":
                    print("done move=1-2", flush=True)
                elif mode == "error":
                    print('error message="no move for you"')
                    print('done move=""', flush=True)
                else:
                    if mode == "warn":
                        print('error message="a small hiccup"')
                    print(f"info depth=1 score=0.10 pv={answer}")
                    print(f"done move={answer}", flush=True)
            elif word == "quit" and mode != "stubborn":
                return 0
    if mode == "stubborn":
        while True:
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
