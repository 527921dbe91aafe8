"""pg_e2e.py - process groups and sequence numbers on live capture: a DDP job
on gloo (tests/dist/progs/pg_job.py) whose ranks 0 and 2 also all_reduce on
a group of their own (dist.new_group) every step, 4 ranks under
`gprof-dl run -o t-%q{RANK}.gpdl`, then:

  - `summary --view distributed --format json`: no call whose op differs
    across ranks (facts.mismatches 0), and in the Collective Summary the
    subset's all_reduce (group size 2, its bytes, one call a counted step)
    apart from DDP's (group size 4, the gradients' bytes, one a step);
  - `export --csv`: every gloo call has a process group, every collective a
    sequence number and every send and receive its peer; the calls with one
    (group, sequence number) agree on op and bytes on every rank, and every
    member of the group has one; within a group a rank's numbers go up by one
    a call in start order; the two groups have distinct names, and the
    world all_reduce made after the point-to-point calls still agrees.

    python pg_e2e.py --gprof-dl BIN --job tests/dist/progs/pg_job.py --pydir DIR --cache-dir DIR
                     --python PY --torch 1|2 --case subset

torch 2 launches with torchrun, torch 1.13 with the job's own launcher.
Exit status: 0 pass, 1 fail, 77 skip."""
import collections
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
from checks import check, eq, must, text  # noqa: E402
from torchharness import JobCtx, free_port, torch_main  # noqa: E402

WORLD = 4
STEPS = 16    # per rank; the views skip the first 8 (half, at most 10)
SUBSET = (0, 2)
SUB_NUMEL = 100  # floats in the subset's all_reduce
P2P = ("send", "recv")


class Ctx(JobCtx):
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.prog = args.job

    def job(self):
        job = ["--steps", str(STEPS), "--subset", ",".join(map(str, SUBSET)), "--sub-numel", str(SUB_NUMEL)]
        if self.torch == "2":
            torchrun = os.path.join(os.path.dirname(self.py), "torchrun")
            cmd = [torchrun, "--nproc-per-node", str(WORLD), "--master-port", str(free_port()),
                   self.prog, "rank", *job]
        else:
            cmd = [self.py, self.prog, "launch", "--world", str(WORLD), *job]
        p = self.gprof("run", "-o", "t-%q{RANK}.gpdl", "--", *cmd)
        ranks = {}
        for line in text(p.stdout).splitlines():
            if line.startswith("{"):
                d = json.loads(line)
                ranks[d["rank"]] = d
        return ranks, text(p.stderr)


def comm_rows(c, files):
    """Each rank's communication.csv rows, by rank."""
    out = c.path("csv")
    c.gprof("export", "--csv", *files, "-o", out)
    rows = {}
    for r in range(WORLD):
        found = glob.glob(os.path.join(out, f"rank={r}", "communication.csv"))
        must(found, f"export --csv: no communication.csv for rank {r}: {sorted(os.listdir(out))}")
        with open(found[0], newline="") as f:
            rows[r] = [x for x in csv.DictReader(f) if x["backend"] == "gloo"]
        rows[r].sort(key=lambda x: int(x["start_ns"]))
    return rows


def check_summary(c, files, ranks):
    d = json.loads(c.gprof("summary", *files, "--view", "distributed", "--format", "json").stdout)
    t = d["tables"]
    facts = t["distributed"]["sections"][0]["facts"]
    eq(facts.get("mismatches"), 0, "collective calls whose op differs across ranks (facts.mismatches)")
    coll = t.get("collectives")
    must(coll is not None and coll.get("sections"), f"no Collective Summary: {sorted(t)}")
    rows = coll["sections"][0]["rows"]
    per_rank = {x["rank"]: x for x in t["distributed"]["sections"][0]["rows"]}
    counted = per_rank.get(0, {}).get("steps")
    must(counted and all(per_rank.get(r, {}).get("steps") == counted for r in range(WORLD)),
         f"counted steps by rank: { {r: x.get('steps') for r, x in per_rank.items()} }")
    ar = {x["group_size"]: x for x in rows if x["collective"].endswith("all_reduce")}
    must(set(ar) == {len(SUBSET), WORLD}, f"all_reduce rows by group size: {sorted(ar)}, expected "
         f"{sorted({len(SUBSET), WORLD})} (the subset's and DDP's): {rows}")
    eq(ar[len(SUBSET)]["calls"], counted, "the subset group's all_reduce calls (one a counted step)")
    eq(ar[len(SUBSET)]["bytes_per_call"], ranks[SUBSET[0]]["sub_bytes"], "the subset group's all_reduce bytes")
    eq(ar[WORLD]["calls"], counted, "DDP's all_reduce calls on the world group (one a counted step)")
    eq(ar[WORLD]["bytes_per_call"], ranks[0]["grad_bytes"], "DDP's all_reduce bytes (its one bucket)")
    return facts


def check_calls(rows, ranks):
    """Group, sequence number and peer of every recorded gloo call."""
    for r in range(WORLD):
        must(rows[r], f"rank {r}: no gloo calls in its export")
        for x in rows[r]:
            what = f"rank {r}'s {x['op']} at {x['start_ns']}"
            check(x["process_group"] != "", f"{what}: no process group")
            check(x["group_size"] != "", f"{what}: no group size")
            if x["op"] in P2P:
                check(x["peer"] != "", f"{what}: no peer")
            else:
                check(x["coll_seq"] != "", f"{what}: no sequence number")
    # one (group, sequence number): one call, alike on every member
    calls = collections.defaultdict(dict)  # (pg, seq) -> rank -> (op, bytes, group size)
    for r in range(WORLD):
        for x in rows[r]:
            if x["op"] in P2P or x["coll_seq"] == "" or x["process_group"] == "":
                continue
            key = (x["process_group"], int(x["coll_seq"]))
            check(r not in calls[key], f"rank {r} has two calls in group {key[0]!r} with sequence number {key[1]}")
            calls[key][r] = (x["op"], x["bytes"], x["group_size"])
    for (pg, seq), by in sorted(calls.items()):
        seen = set(by.values())
        check(len(seen) == 1, f"group {pg!r} call {seq}: the ranks disagree on op, bytes or group size: {by}")
        size = int(next(iter(seen))[2])
        check(len(by) == size, f"group {pg!r} call {seq}: {len(by)} ranks have it, its group has {size}: {by}")
    # within a group, a rank's numbers go up by one a call, in start order
    for r in range(WORLD):
        per = collections.defaultdict(list)
        for x in rows[r]:
            if x["op"] not in P2P and x["coll_seq"] != "":
                per[x["process_group"]].append(int(x["coll_seq"]))
        for pg, seqs in per.items():
            steps = [b - a for a, b in zip(seqs, seqs[1:])]
            check(all(s == 1 for s in steps), f"rank {r}, group {pg!r}: sequence numbers in start order "
                  f"{seqs[:8]}... do not go up by one a call")
    # the groups: one name for the world, another for the subset
    names = collections.defaultdict(set)
    for r in range(WORLD):
        for x in rows[r]:
            names[x["group_size"]].add(x["process_group"])
    check(len(names[str(WORLD)]) == 1 and len(names[str(len(SUBSET))]) == 1
          and names[str(WORLD)] != names[str(len(SUBSET))],
          f"group names by size: {dict(names)}, expected one per group, distinct")
    world_pg = next(iter(names[str(WORLD)]), None)
    # the point-to-point calls the job says it made, with group and peer
    for r in range(WORLD):
        got = sorted((x["op"], int(x["peer"]) if x["peer"] else None,
                      "world" if x["process_group"] == world_pg else "sub") for x in rows[r] if x["op"] in P2P)
        want = sorted((op, peer, g) for op, peer, g in ranks[r]["p2p"])
        eq(got, want, f"rank {r}'s send and recv (op, peer, group)")
    # the world all_reduce after the point-to-point calls: one call on all ranks
    last = [next((x for x in reversed(rows[r]) if x["op"] == "all_reduce" and x["group_size"] == str(WORLD)), None)
            for r in range(WORLD)]
    must(all(last), "a rank has no world all_reduce")
    keys = {(x["process_group"], x["coll_seq"]) for x in last}
    check(len(keys) == 1, f"the world all_reduce after send and recv: (group, sequence number) by rank {keys}")
    return calls


def case_subset(c):
    ranks, err = c.job()
    must(sorted(ranks) == list(range(WORLD)), f"the ranks' lines: {ranks}\n{err[-2000:]}")
    for r in range(WORLD):
        eq(ranks[r]["steps"], STEPS, f"rank {r}'s steps")
    files = [f"t-{r}.gpdl" for r in range(WORLD)]
    for f in files:
        must(os.path.exists(c.path(f)), f"no rank file {f}: {sorted(os.listdir(c.tmp))}")
    facts = check_summary(c, files, ranks)
    calls = check_calls(comm_rows(c, files), ranks)
    print(f"subset: {len(calls)} (group, sequence number) calls matched across ranks, "
          f"{facts.get('collective_calls')} collective calls, mismatches {facts.get('mismatches')}")


def main():
    def add_args(ap):
        ap.add_argument("--job", required=True, help="tests/dist/progs/pg_job.py")
    return torch_main(globals(), Ctx, "gpdl-pg-", add_args)


if __name__ == "__main__":
    sys.exit(main())
