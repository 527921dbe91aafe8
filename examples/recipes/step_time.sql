-- step_time.sql - per rank and ProfileStep: when it started, how long it
-- lasted, whether the Distributed view counts it, and, for a counted step,
-- the rank's wait in it and its busy time (step - wait), as
-- `gprof-dl summary --view distributed` defines them (gprof-dl-summary(1),
-- "Distributed Summary"):
--   counted: all of a rank's steps but the first skip_steps, never more
--     than half of them (floor(n / 2));
--   wait: each communication call's duration - the shortest duration of the
--     same call over the ranks (matched by process group and coll_seq, else
--     by the ordinal rule; point-to-point by source, destination and
--     ordinal), lying at the call's start; per step, the union of the waits
--     of the calls that started in it, clipped to it (gaps and islands).
-- Times are the job clock (Unix ns); durations ns.
-- Engines: DuckDB and Spark SQL over `gprof-dl export --csv --partitioned`,
-- sqlite over `gprof-dl export --sqlite` (examples/recipes/run); plain SQL
-- with window functions.
-- A rank's calls: its host communication calls (the outermost of each
-- thread), or on a rank with communication GPU work, that work: the work of
-- each host call (its runtime call, by correlation, lies in the call) from
-- its first start to its last end, timed in the step its host call started
-- in.
-- params: skip_steps (default 10, as --skip-steps).
WITH params AS (
  SELECT 10 AS skip_steps
),
-- each rank's ProfileStep ranges (steps.step: 0, 1, ... in start order)
rank_steps AS (
  SELECT rank, step, start_ns, end_ns, dur_ns,
         COUNT(*) OVER (PARTITION BY rank) AS n
  FROM steps
  WHERE rank >= 0
),
-- counted: all but the first skip_steps, never more than half (floor(n / 2))
counted AS (
  SELECT r.rank, r.step, r.start_ns, r.end_ns, r.dur_ns,
         CASE WHEN r.step >= CASE WHEN p.skip_steps < (r.n - r.n % 2) / 2 THEN p.skip_steps
                                  ELSE (r.n - r.n % 2) / 2 END
              THEN 1 ELSE 0 END AS counted
  FROM rank_steps r CROSS JOIN params p
),
-- what each rank has: GPU work (computation is then its kernels) and
-- communication GPU work (communication is then that)
gpu_src AS (
  SELECT rank, MAX(CASE WHEN type = 'Communication' OR lower(name) LIKE '%nccl%'
                             OR lower(name) LIKE '%rccl%' THEN 1 ELSE 0 END) AS gpu_comm
  FROM kernels WHERE rank >= 0 GROUP BY rank
),
gpu_any AS (
  SELECT rank FROM kernels WHERE rank >= 0
  UNION SELECT rank FROM memcpy WHERE rank >= 0
  UNION SELECT rank FROM memset WHERE rank >= 0
),
src AS (
  SELECT r.rank, CASE WHEN a.rank IS NULL THEN 0 ELSE 1 END AS gpu_comp,
         COALESCE(g.gpu_comm, 0) AS gpu_comm
  FROM (SELECT DISTINCT rank FROM ranks WHERE rank >= 0) r
  LEFT JOIN gpu_any a ON a.rank = r.rank
  LEFT JOIN gpu_src g ON g.rank = r.rank
),
-- the host's communication calls: Communication ranges, and ranges named
-- BACKEND:OP (gloo, nccl, mpi, ucc); the outermost of each thread
call_ranges AS (
  SELECT rank, thread, start_ns, end_ns, dur_ns, name, coll_seq, process_group, peer
  FROM communication
  WHERE rank >= 0
  UNION ALL
  SELECT rank, thread, start_ns, end_ns, dur_ns, name,
         CAST(NULL AS BIGINT), CAST(NULL AS STRING), CAST(NULL AS BIGINT)
  FROM operators
  WHERE rank >= 0
    AND ((lower(substr(name, 1, 5)) IN ('gloo:', 'nccl:') AND length(name) > 5)
         OR (lower(substr(name, 1, 4)) IN ('mpi:', 'ucc:') AND length(name) > 4))
),
outer_calls AS (
  SELECT * FROM (
    SELECT c.*,
           MAX(end_ns) OVER (PARTITION BY rank, thread ORDER BY start_ns, end_ns DESC
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end
    FROM call_ranges c) x
  WHERE before_end IS NULL OR start_ns >= before_end
),
-- on a rank with communication GPU work, the calls are that work: the work
-- each host call launched (its runtime call, by correlation, lies in the
-- call), from its first start to its last end, with the host call's
-- details; work no call launched is a call of its own
gpu_launch AS (
  SELECT k.rank, k.start_ns, k.end_ns, k.dur_ns, k.name,
         c.thread AS c_thread, c.start_ns AS c_start, c.name AS c_name,
         c.coll_seq, c.process_group, c.peer
  FROM kernels k
  LEFT JOIN runtime r ON r.rank = k.rank AND r.pid = k.pid AND r.correlation = k.correlation
  LEFT JOIN outer_calls c ON c.rank = r.rank AND c.thread = r.thread
                         AND r.start_ns >= c.start_ns AND r.start_ns < c.end_ns
  WHERE k.rank >= 0 AND (k.type = 'Communication' OR lower(k.name) LIKE '%nccl%'
                         OR lower(k.name) LIKE '%rccl%')
),
calls AS (
  SELECT o.rank, o.thread, o.start_ns, o.dur_ns, o.name, o.coll_seq, o.process_group, o.peer,
         o.start_ns AS at_ns
  FROM outer_calls o JOIN src ON src.rank = o.rank
  WHERE src.gpu_comm = 0
  UNION ALL
  SELECT g.rank, g.c_thread, MIN(g.start_ns), MAX(g.end_ns) - MIN(g.start_ns), g.c_name,
         g.coll_seq, g.process_group, g.peer, g.c_start
  FROM gpu_launch g JOIN src ON src.rank = g.rank
  WHERE src.gpu_comm = 1 AND g.c_start IS NOT NULL
  GROUP BY g.rank, g.c_thread, g.c_start, g.c_name, g.coll_seq, g.process_group, g.peer
  UNION ALL
  SELECT g.rank, -1, g.start_ns, g.dur_ns, g.name, CAST(NULL AS BIGINT), CAST(NULL AS STRING),
         CAST(NULL AS BIGINT), g.start_ns
  FROM gpu_launch g JOIN src ON src.rank = g.rank
  WHERE src.gpu_comm = 1 AND g.c_start IS NULL
),
-- a call's key in its process group: point-to-point (a peer, and an op
-- that names send or recv) by (source, destination, ordinal); else by
-- coll_seq; else by its ordinal among the rank's calls of the group
call_dir AS (
  SELECT o.*, COALESCE(process_group, '') AS pg,
         CASE WHEN peer >= 0 AND lower(name) LIKE '%send%' AND lower(name) NOT LIKE '%recv%' THEN 1
              WHEN peer >= 0 AND lower(name) LIKE '%recv%' AND lower(name) NOT LIKE '%send%' THEN 2
              ELSE 0 END AS dir
  FROM calls o
),
call_kind AS (
  SELECT d.*,
         CASE WHEN dir > 0 THEN 3 WHEN coll_seq IS NOT NULL THEN 1 ELSE 2 END AS kind,
         CASE WHEN dir = 1 THEN rank WHEN dir = 2 THEN peer ELSE -1 END AS src,
         CASE WHEN dir = 1 THEN peer WHEN dir = 2 THEN rank ELSE -1 END AS dst
  FROM call_dir d
),
call_key AS (
  SELECT k.*,
         CASE WHEN kind = 1 THEN coll_seq
              ELSE ROW_NUMBER() OVER (PARTITION BY rank, kind, pg, src, dst
                                      ORDER BY start_ns, thread) - 1 END AS ord
  FROM call_kind k
),
-- one collective call: the calls of one key; the lowest rank's sets the op,
-- a call naming another op is no member (waits 0)
call_first AS (
  SELECT k.*,
         FIRST_VALUE(name) OVER (PARTITION BY kind, pg, src, dst, ord ORDER BY rank, start_ns
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS first_op
  FROM call_key k
),
call_member AS (
  SELECT f.*, CASE WHEN kind = 3 OR name = first_op THEN 1 ELSE 0 END AS member
  FROM call_first f
),
-- a call's wait: its duration - the shortest of its collective call's members
call_wait AS (
  SELECT m.rank, m.start_ns, m.dur_ns, m.at_ns, m.name, m.member,
         CASE WHEN member = 1
              THEN dur_ns - MIN(CASE WHEN member = 1 THEN dur_ns END)
                            OVER (PARTITION BY kind, pg, src, dst, ord)
              ELSE 0 END AS wait_ns
  FROM call_member m
),
-- each wait lies at its call's start, clipped to the counted step the call
-- started in (a GPU call: its host call); a rank's wait in a step is their
-- union (gaps and islands: the running end of the intervals before)
wait_ivl AS (
  SELECT w.rank, c.step, w.start_ns AS s,
         CASE WHEN w.start_ns < c.end_ns AND w.start_ns + w.wait_ns > c.end_ns THEN c.end_ns
              ELSE w.start_ns + w.wait_ns END AS e
  FROM call_wait w
  JOIN counted c ON c.rank = w.rank AND c.counted = 1
                AND w.at_ns >= c.start_ns AND w.at_ns < c.end_ns
  WHERE w.wait_ns > 0
),
wait_prev AS (
  SELECT rank, step, s, e,
         MAX(e) OVER (PARTITION BY rank, step ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
  FROM wait_ivl
),
-- in start order, each interval adds what lies past the ones before it
step_wait AS (
  SELECT rank, step,
         SUM(CASE WHEN prev_e IS NULL OR prev_e <= s THEN e - s
                  WHEN e > prev_e THEN e - prev_e ELSE 0 END) AS wait_ns
  FROM wait_prev
  GROUP BY rank, step
),
-- per counted step: its wait and busy time (step - wait)
step_busy AS (
  SELECT c.rank, c.step, c.start_ns, c.dur_ns, c.counted,
         CASE WHEN c.counted = 1 THEN COALESCE(w.wait_ns, 0) END AS wait_ns,
         CASE WHEN c.counted = 0 THEN NULL
              WHEN c.dur_ns > COALESCE(w.wait_ns, 0) THEN c.dur_ns - COALESCE(w.wait_ns, 0)
              ELSE 0 END AS busy_ns
  FROM counted c
  LEFT JOIN step_wait w ON w.rank = c.rank AND w.step = c.step
)
SELECT rank, step, start_ns, dur_ns, counted, wait_ns, busy_ns
FROM step_busy
ORDER BY rank, step
