-- collectives.sql: communication per collective, as the Collective Summary
-- of `gprof-dl summary --view distributed` gives it: one row per op, backend
-- and group size (rank empty) with Calls, Bytes per Call, Total per Rank,
-- Mean, Wait per Rank, Algbw and Busbw; under it one row per rank (rank set)
-- with that rank's own calls, bytes per call, time (total_ns), mean, wait,
-- and bandwidth_gbps = the buffers (S below) of its calls / its time, waits
-- included (algbw and busbw empty).
--
-- Engines: DuckDB, Spark SQL, sqlite (3.39 or later: FULL OUTER JOIN), as it
-- is: plain SQL (CASE for greatest/least; CAST(... AS DOUBLE) before a
-- division, and the integer halves written with %, as sqlite divides integers
-- and DuckDB and Spark do not). Tables of the SQL exports (gprof-dl-export(1)):
-- communication, operators, ranges, runtime, marks, memory, kernels,
-- threads, steps, ranks (the calls: views.sql's coll_calls); or, with
-- `run --aggregates`, the aggregate tables (agg_views.sql's coll_calls,
-- ranks and steps: agg_calls, agg_ranks, agg_steps).
--
-- Parameters (the params view of views.sql): skip_steps, the steps of each
-- rank left out before its counted steps (never more than half of them), as
-- --skip-steps.
--
-- Rules, as gprof-dl's (gprof-dl-summary(1), "Communication calls" and
-- "The collectives' table"):
--  - a rank's calls: on a rank without communication GPU work, the
--    outermost communication call of each host thread (a host range of type
--    Communication, or named BACKEND:OP for gloo, nccl, mpi, ucc; not the
--    c10d:: enqueue). On a rank with some (a kernel of type Communication,
--    named with nccl or rccl, or launched inside a communication operator),
--    the communication kernels each host call launched, from their first
--    start to their last end, with the host call's details; a communication
--    kernel no call launched is a call of its own;
--  - a call is keyed within its process group: a send or receive with a peer
--    by (source, destination, its ordinal among the transfers between them);
--    else by its sequence number (coll_seq); else by its ordinal in start
--    order among the rank's calls of that group. The calls of one key are
--    one collective call; the lowest rank's sets its op, and a call naming
--    another op is a mismatch (no part of the call, waits 0);
--  - a call's wait = its duration - the shortest duration of the call over
--    the ranks (over all their calls, counted steps or not);
--  - the table holds the calls that started in the ranks' counted steps (a
--    rank without steps: all of its calls);
--  - Calls: the collective calls (one per key); Bytes per Call: the bytes /
--    the ranks' calls (integer); Total and Wait per Rank: the sums / the
--    ranks that made calls of the row; Mean: the sum / the ranks' calls;
--    Algbw = sum of S / sum of t over the collective calls, t the call's
--    shortest duration, S its bytes (n x the bytes for all_gather, as the
--    lowest rank's call says); Busbw = Algbw x F, F = 2(n-1)/n for
--    all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, 1
--    otherwise; n the group size (the call's, else the rank's world size).
--    GB/s = bytes per ns.
-- What SQL does not reproduce here, or does otherwise:
--  - calls that start at the same time on one rank are ordered by thread
--    here (gprof-dl: by trace order); ordinals may differ only then;
--  - host calls that overlap partly (one starts inside another and ends
--    after it): the later one is outermost for gprof-dl when the earlier was
--    itself inside a third; here it is not;
--  - communication GPU work in the memcpy and memset tables is not looked at;
--  - op names are compared as they are; the bus factor looks at the op
--    after its "backend:", lower-cased, without '_', '-' and spaces.
-- Times in ns, real where a mean (per rank, per call); bandwidths in GB/s.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
WITH rank_info AS (
  SELECT r.rank, lower(coalesce(r.dist_backend, '')) AS backend,
         CASE WHEN r.world_size > 0 THEN r.world_size
              ELSE (SELECT count(*) FROM ranks x WHERE x.rank >= 0) END AS world
  FROM ranks r
  WHERE r.rank >= 0
),
counted_steps AS (
  SELECT s.rank, s.start_ns, s.end_ns
  FROM (SELECT rank, step, start_ns, end_ns, count(*) OVER (PARTITION BY rank) AS n
        FROM steps WHERE rank >= 0) s
  CROSS JOIN params p
  WHERE s.step >= p.skip_steps OR 2 * s.step >= s.n - s.n % 2
),
shaped AS (
  SELECT c.*,
         CASE WHEN instr(c.name, ':') > 0 AND substr(c.name, instr(c.name, ':') + 1, 1) <> ':'
              THEN substr(c.name, instr(c.name, ':') + 1) ELSE c.name END AS op_part,
         CASE WHEN instr(c.name, ':') > 1 AND length(c.name) > instr(c.name, ':')
               AND lower(substr(c.name, 1, instr(c.name, ':') - 1)) IN ('gloo', 'nccl', 'mpi', 'ucc')
              THEN lower(substr(c.name, 1, instr(c.name, ':') - 1)) END AS name_backend
  FROM coll_calls c
),
normed AS (
  SELECT s.*, lower(replace(replace(replace(s.op_part, '_', ''), '-', ''), ' ', '')) AS norm
  FROM shaped s
),
keyed AS (
  SELECT n.*,
         CASE WHEN n.peer IS NOT NULL AND n.peer >= 0
               AND (n.norm LIKE '%send%') <> (n.norm LIKE '%recv%') THEN 3
              WHEN n.coll_seq IS NOT NULL THEN 1 ELSE 2 END AS kind,
         CASE WHEN n.norm LIKE '%send%' THEN n.rank ELSE n.peer END AS p_src,
         CASE WHEN n.norm LIKE '%send%' THEN n.peer ELSE n.rank END AS p_dst
  FROM normed n
),
keyed2 AS (
  SELECT k.*,
         CASE WHEN k.kind = 3 THEN k.p_src ELSE -1 END AS k_src,
         CASE WHEN k.kind = 3 THEN k.p_dst ELSE -1 END AS k_dst,
         CASE WHEN k.kind = 1 THEN k.coll_seq
              ELSE row_number() OVER (PARTITION BY k.rank, k.pg, k.kind,
                                      CASE WHEN k.kind = 3 THEN k.p_src ELSE -1 END,
                                      CASE WHEN k.kind = 3 THEN k.p_dst ELSE -1 END
                                      ORDER BY k.start_ns, k.thread) - 1 END AS k_n
  FROM keyed k
),
matched AS (
  SELECT k.*,
         first_value(k.name) OVER (PARTITION BY k.pg, k.kind, k.k_src, k.k_dst, k.k_n
                                   ORDER BY k.rank, k.start_ns, k.thread) AS op
  FROM keyed2 k
),
members AS (
  SELECT m.*, CASE WHEN m.kind <> 3 AND m.name <> m.op THEN 1 ELSE 0 END AS mismatch
  FROM matched m
),
timed AS (
  SELECT m.*,
         min(CASE WHEN m.mismatch = 0 THEN m.dur_ns END)
           OVER (PARTITION BY m.pg, m.kind, m.k_src, m.k_dst, m.k_n) AS min_ns
  FROM members m
),
-- the calls that started in a counted step, with their wait
counted AS (
  SELECT m.*, CASE WHEN m.mismatch = 1 THEN 0 ELSE m.dur_ns - m.min_ns END AS wait_ns,
         coalesce(m.name_backend,
                  CASE WHEN lower(m.name) LIKE '%nccl%' OR lower(m.name) LIKE '%rccl%'
                       THEN 'nccl' END, r.backend) AS backend,
         CASE WHEN m.group_size > 0 THEN m.group_size ELSE r.world END AS n_group
  FROM timed m
  JOIN rank_info r ON r.rank = m.rank
  WHERE NOT EXISTS (SELECT 1 FROM steps t WHERE t.rank = m.rank)
     OR EXISTS (SELECT 1 FROM counted_steps t
                WHERE t.rank = m.rank AND t.start_ns <= m.at_ns AND m.at_ns < t.end_ns)
),
sized AS (
  SELECT c.*,
         CASE WHEN c.name_backend IS NOT NULL THEN c.op_part ELSE c.name END AS collective,
         CASE WHEN c.norm LIKE '%allgather%' THEN CAST(coalesce(c.bytes, 0) AS DOUBLE) * c.n_group
              ELSE CAST(coalesce(c.bytes, 0) AS DOUBLE) END AS algo_bytes,
         CASE WHEN c.norm LIKE '%allreduce%'
              THEN 2.0 * (c.n_group - 1) / CAST(c.n_group AS DOUBLE)
              WHEN c.norm LIKE '%reducescatter%' OR c.norm LIKE '%allgather%'
                OR c.norm LIKE '%alltoall%'
              THEN (c.n_group - 1) / CAST(c.n_group AS DOUBLE)
              ELSE 1.0 END AS bus_factor,
         -- the collective call counts once: at its lowest rank's call
         CASE WHEN c.mismatch = 0
               AND row_number() OVER (PARTITION BY c.pg, c.kind, c.k_src, c.k_dst, c.k_n,
                                                   c.mismatch
                                      ORDER BY c.rank, c.start_ns, c.thread) = 1
              THEN 1 ELSE 0 END AS is_first
  FROM counted c
),
per_rank AS (
  SELECT collective, name, backend, n_group AS group_size, rank,
         count(*) AS members, sum(coalesce(bytes, 0)) AS bytes, sum(dur_ns) AS dur,
         sum(wait_ns) AS wait, sum(algo_bytes) AS algo_all, sum(is_first) AS calls,
         sum(CASE WHEN is_first = 1 THEN algo_bytes ELSE 0 END) AS algo,
         sum(CASE WHEN is_first = 1 THEN CAST(min_ns AS DOUBLE) ELSE 0 END) AS min_sum,
         max(bus_factor) AS bus_factor
  FROM sized
  GROUP BY collective, name, backend, n_group, rank
),
-- each rank's row, and the op's row over its ranks (rank NULL)
both_rows AS (
  SELECT p.*, x.is_job, CASE WHEN x.is_job = 1 THEN NULL ELSE p.rank END AS out_rank
  FROM per_rank p CROSS JOIN (SELECT 0 AS is_job UNION ALL SELECT 1 AS is_job) x
),
summed AS (
  SELECT collective, name, backend, group_size, out_rank, is_job,
         sum(members) AS members, sum(bytes) AS bytes, sum(dur) AS dur, sum(wait) AS wait,
         count(*) AS ranks, sum(calls) AS calls, sum(algo) AS algo, sum(min_sum) AS min_sum,
         sum(algo_all) AS algo_all, max(bus_factor) AS bus_factor
  FROM both_rows
  GROUP BY collective, name, backend, group_size, out_rank, is_job
),
result_rows AS (
  SELECT collective, backend, group_size, out_rank AS rank,
         CASE WHEN is_job = 1 THEN calls ELSE members END AS calls,
         CASE WHEN bytes > 0 THEN CAST((bytes - bytes % members) / members AS BIGINT) END
           AS bytes_per_call,
         CAST(dur AS DOUBLE) / ranks AS total_ns,
         CAST(dur AS DOUBLE) / members AS mean_ns,
         CAST(wait AS DOUBLE) / ranks AS wait_ns,
         CASE WHEN is_job = 1 AND algo > 0 AND min_sum > 0 THEN algo / min_sum END AS algbw,
         CASE WHEN is_job = 1 AND algo > 0 AND min_sum > 0 THEN algo / min_sum * bus_factor END
           AS busbw,
         CASE WHEN is_job = 0 AND dur > 0 AND algo_all > 0 THEN algo_all / dur END
           AS bandwidth_gbps,
         max(CASE WHEN is_job = 1 THEN CAST(dur AS DOUBLE) / ranks END)
           OVER (PARTITION BY name, backend, group_size) AS sort_total,
         name AS sort_name, CASE WHEN is_job = 1 THEN -1 ELSE out_rank END AS sort_rank
  FROM summed
)
SELECT collective, backend, group_size, rank, calls, bytes_per_call, total_ns, mean_ns,
       wait_ns, algbw, busbw, bandwidth_gbps
FROM result_rows
ORDER BY sort_total DESC, sort_name, backend, group_size, sort_rank
