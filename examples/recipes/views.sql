-- views.sql - the views the recipes share, as CREATE TEMPORARY VIEW
-- statements (DuckDB, Spark SQL and sqlite alike), one a step; a recipe is
-- the query that is its own over them. examples/recipes/run puts the views
-- a recipe reads (and those they read) first in its query, as common table
-- expressions, and sets params from --skip-steps and --params. By hand, run
-- this file in the session, the tables registered, then the recipe:
--   cat views.sql rank_time.sql | sqlite3 job.sqlite
--   spark-sql -i views.sql -f rank_time.sql
-- (change the params view here for other parameters).
-- The views, in order:
--   params           skip_steps (10: the steps of each rank left out, as
--                    --skip-steps), top_n (20: the rows the top_* recipes
--                    print; 0: all)
--   rank_steps ... step_busy   each rank's steps, which count, the host's
--                    communication calls matched across the ranks, each
--                    call's wait, the wait and busy time per step
--                    (step_time.sql, rank_time.sql, straggler.sql)
--   host ... per_rank          computation, communication, overlap, idle and
--                    the step statistics per rank (rank_time.sql,
--                    straggler.sql)
--   job_window, rank_window    the union of the steps (gaps and islands), the
--                    job's and each rank's (top_operators.sql, top_kernels.sql)
--   launchers        the host event that launched each correlation id: the
--                    earliest of its process (top_*.sql, collectives.sql)
-- The views' names are the recipes' to use; a recipe's own CTE of the same
-- name hides the view in that recipe only.

CREATE TEMPORARY VIEW params AS SELECT 10 AS skip_steps, 20 AS top_n;

-- each rank's ProfileStep ranges (steps.step: 0, 1, ... in start order)
CREATE TEMPORARY VIEW rank_steps AS
  SELECT rank, step, start_ns, end_ns, dur_ns,
         COUNT(*) OVER (PARTITION BY rank) AS n
  FROM steps
  WHERE rank >= 0;

-- counted: all but the first skip_steps, never more than half (floor(n / 2))
CREATE TEMPORARY VIEW counted AS
  SELECT r.rank, r.step, r.start_ns, r.end_ns, r.dur_ns,
         CASE WHEN r.step >= CASE WHEN p.skip_steps < (r.n - r.n % 2) / 2 THEN p.skip_steps
                                  ELSE (r.n - r.n % 2) / 2 END
              THEN 1 ELSE 0 END AS counted
  FROM rank_steps r CROSS JOIN params p;

-- what each rank has: GPU work (computation is then its kernels) and
-- communication GPU work (communication is then that)
CREATE TEMPORARY VIEW gpu_src AS
  SELECT rank, MAX(CASE WHEN type = 'Communication' OR lower(name) LIKE '%nccl%'
                             OR lower(name) LIKE '%rccl%' THEN 1 ELSE 0 END) AS gpu_comm
  FROM kernels WHERE rank >= 0 GROUP BY rank;

CREATE TEMPORARY VIEW gpu_any AS
  SELECT rank FROM kernels WHERE rank >= 0
  UNION SELECT rank FROM memcpy WHERE rank >= 0
  UNION SELECT rank FROM memset WHERE rank >= 0;

CREATE TEMPORARY VIEW src AS
  SELECT r.rank, CASE WHEN a.rank IS NULL THEN 0 ELSE 1 END AS gpu_comp,
         COALESCE(g.gpu_comm, 0) AS gpu_comm
  FROM (SELECT DISTINCT rank FROM ranks WHERE rank >= 0) r
  LEFT JOIN gpu_any a ON a.rank = r.rank
  LEFT JOIN gpu_src g ON g.rank = r.rank;

-- the host's communication calls: Communication ranges, and ranges named
-- BACKEND:OP (gloo, nccl, mpi, ucc); the outermost of each thread
CREATE TEMPORARY VIEW call_ranges AS
  SELECT rank, thread, start_ns, end_ns, dur_ns, name, coll_seq, process_group, peer
  FROM communication
  WHERE rank >= 0
  UNION ALL
  SELECT rank, thread, start_ns, end_ns, dur_ns, name,
         CAST(NULL AS BIGINT), CAST(NULL AS STRING), CAST(NULL AS BIGINT)
  FROM operators
  WHERE rank >= 0
    AND ((lower(substr(name, 1, 5)) IN ('gloo:', 'nccl:') AND length(name) > 5)
         OR (lower(substr(name, 1, 4)) IN ('mpi:', 'ucc:') AND length(name) > 4));

CREATE TEMPORARY VIEW outer_calls AS
  SELECT * FROM (
    SELECT c.*,
           MAX(end_ns) OVER (PARTITION BY rank, thread ORDER BY start_ns, end_ns DESC
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end
    FROM call_ranges c) x
  WHERE before_end IS NULL OR start_ns >= before_end;

-- on a rank with communication GPU work, the calls are that work: the work
-- each host call launched (its runtime call, by correlation, lies in the
-- call), from its first start to its last end, with the host call's
-- details; work no call launched is a call of its own
CREATE TEMPORARY VIEW gpu_launch AS
  SELECT k.rank, k.start_ns, k.end_ns, k.dur_ns, k.name,
         c.thread AS c_thread, c.start_ns AS c_start, c.name AS c_name,
         c.coll_seq, c.process_group, c.peer
  FROM kernels k
  LEFT JOIN runtime r ON r.rank = k.rank AND r.pid = k.pid AND r.correlation = k.correlation
  LEFT JOIN outer_calls c ON c.rank = r.rank AND c.thread = r.thread
                         AND r.start_ns >= c.start_ns AND r.start_ns < c.end_ns
  WHERE k.rank >= 0 AND (k.type = 'Communication' OR lower(k.name) LIKE '%nccl%'
                         OR lower(k.name) LIKE '%rccl%');

CREATE TEMPORARY VIEW calls AS
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
  WHERE src.gpu_comm = 1 AND g.c_start IS NULL;

-- a call's key in its process group: point-to-point (a peer, and an op
-- that names send or recv) by (source, destination, ordinal); else by
-- coll_seq; else by its ordinal among the rank's calls of the group
CREATE TEMPORARY VIEW call_dir AS
  SELECT o.*, COALESCE(process_group, '') AS pg,
         CASE WHEN peer >= 0 AND lower(name) LIKE '%send%' AND lower(name) NOT LIKE '%recv%' THEN 1
              WHEN peer >= 0 AND lower(name) LIKE '%recv%' AND lower(name) NOT LIKE '%send%' THEN 2
              ELSE 0 END AS dir
  FROM calls o;

CREATE TEMPORARY VIEW call_kind AS
  SELECT d.*,
         CASE WHEN dir > 0 THEN 3 WHEN coll_seq IS NOT NULL THEN 1 ELSE 2 END AS kind,
         CASE WHEN dir = 1 THEN rank WHEN dir = 2 THEN peer ELSE -1 END AS src,
         CASE WHEN dir = 1 THEN peer WHEN dir = 2 THEN rank ELSE -1 END AS dst
  FROM call_dir d;

CREATE TEMPORARY VIEW call_key AS
  SELECT k.*,
         CASE WHEN kind = 1 THEN coll_seq
              ELSE ROW_NUMBER() OVER (PARTITION BY rank, kind, pg, src, dst
                                      ORDER BY start_ns, thread) - 1 END AS ord
  FROM call_kind k;

-- one collective call: the calls of one key; the lowest rank's sets the op,
-- a call naming another op is no member (waits 0)
CREATE TEMPORARY VIEW call_first AS
  SELECT k.*,
         FIRST_VALUE(name) OVER (PARTITION BY kind, pg, src, dst, ord ORDER BY rank, start_ns
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS first_op
  FROM call_key k;

CREATE TEMPORARY VIEW call_member AS
  SELECT f.*, CASE WHEN kind = 3 OR name = first_op THEN 1 ELSE 0 END AS member
  FROM call_first f;

-- a call's wait: its duration - the shortest of its collective call's members
CREATE TEMPORARY VIEW call_wait AS
  SELECT m.rank, m.start_ns, m.dur_ns, m.at_ns, m.name, m.member,
         CASE WHEN member = 1
              THEN dur_ns - MIN(CASE WHEN member = 1 THEN dur_ns END)
                            OVER (PARTITION BY kind, pg, src, dst, ord)
              ELSE 0 END AS wait_ns
  FROM call_member m;

-- each wait lies at its call's start, clipped to the counted step the call
-- started in (a GPU call: its host call); a rank's wait in a step is their
-- union (gaps and islands: the running end of the intervals before)
CREATE TEMPORARY VIEW wait_ivl AS
  SELECT w.rank, c.step, w.start_ns AS s,
         CASE WHEN w.start_ns < c.end_ns AND w.start_ns + w.wait_ns > c.end_ns THEN c.end_ns
              ELSE w.start_ns + w.wait_ns END AS e
  FROM call_wait w
  JOIN counted c ON c.rank = w.rank AND c.counted = 1
                AND w.at_ns >= c.start_ns AND w.at_ns < c.end_ns
  WHERE w.wait_ns > 0;

CREATE TEMPORARY VIEW wait_prev AS
  SELECT rank, step, s, e,
         MAX(e) OVER (PARTITION BY rank, step ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
  FROM wait_ivl;

-- in start order, each interval adds what lies past the ones before it
CREATE TEMPORARY VIEW step_wait AS
  SELECT rank, step,
         SUM(CASE WHEN prev_e IS NULL OR prev_e <= s THEN e - s
                  WHEN e > prev_e THEN e - prev_e ELSE 0 END) AS wait_ns
  FROM wait_prev
  GROUP BY rank, step;

-- per counted step: its wait and busy time (step - wait)
CREATE TEMPORARY VIEW step_busy AS
  SELECT c.rank, c.step, c.start_ns, c.dur_ns, c.counted,
         CASE WHEN c.counted = 1 THEN COALESCE(w.wait_ns, 0) END AS wait_ns,
         CASE WHEN c.counted = 0 THEN NULL
              WHEN c.dur_ns > COALESCE(w.wait_ns, 0) THEN c.dur_ns - COALESCE(w.wait_ns, 0)
              ELSE 0 END AS busy_ns
  FROM counted c
  LEFT JOIN step_wait w ON w.rank = c.rank AND w.step = c.step;

-- the host's ranges that matter: operators, Dataloader ranges, and the
-- communication operators (Communication ranges, and names such as gloo:*,
-- nccl:*, c10d::*, Paddle's c_allreduce*, ...: gprof-dl-summary(1), "What
-- counts as communication")
CREATE TEMPORARY VIEW host AS
  SELECT rank, thread, start_ns, end_ns, type, 1 AS is_comm
  FROM communication WHERE rank >= 0
  UNION ALL
  SELECT rank, thread, start_ns, end_ns, type, is_comm
  FROM (SELECT rank, thread, start_ns, end_ns, type, name,
               CASE WHEN lower(substr(name, 1, 5)) IN ('nccl:', 'gloo:')
                      OR lower(substr(name, 1, 4)) IN ('mpi:', 'ucc:')
                      OR lower(substr(name, 1, 6)) = 'c10d::'
                      OR lower(substr(name, 1, 18)) = 'record_param_comms'
                      OR lower(substr(name, 1, 11)) IN ('c_allreduce', 'c_allgather', 'c_broadcast')
                      OR lower(substr(name, 1, 15)) = 'c_reducescatter'
                      OR lower(substr(name, 1, 9)) IN ('c_reduce_', 'c_scatter')
                      OR lower(substr(name, 1, 8)) = 'alltoall'
                      OR lower(substr(name, 1, 7)) IN ('send_v2', 'recv_v2', 'barrier')
                      OR lower(substr(name, 1, 12)) IN ('partial_send', 'partial_recv')
                      OR lower(substr(name, 1, 17)) = 'partial_allgather'
                    THEN 1 ELSE 0 END AS is_comm
        FROM (SELECT rank, thread, start_ns, end_ns, type, name FROM operators WHERE rank >= 0
              UNION ALL
              SELECT rank, thread, start_ns, end_ns, type, name FROM ranges WHERE rank >= 0) u) h
  WHERE is_comm = 1 OR type IN ('Operator', 'Dataloader');

-- an operator that starts inside a communication range of its thread is
-- part of the communication, not computation
CREATE TEMPORARY VIEW host_marked AS
  SELECT h.*,
         MAX(CASE WHEN is_comm = 1 THEN end_ns END)
           OVER (PARTITION BY rank, thread ORDER BY start_ns, end_ns DESC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS comm_end
  FROM host h;

-- which set each range or kernel belongs to: one row per (range, set)
CREATE TEMPORARY VIEW sets AS
  SELECT 'comp' AS what UNION ALL SELECT 'comm' UNION ALL SELECT 'busy'
  UNION ALL SELECT 'dataloader' UNION ALL SELECT 'active';

CREATE TEMPORARY VIEW host_sets AS
  SELECT h.rank, h.start_ns, h.end_ns,
         CASE WHEN src.gpu_comp = 0 AND h.is_comm = 0 AND h.type = 'Operator'
                   AND (h.comm_end IS NULL OR h.start_ns >= h.comm_end) THEN 1 ELSE 0 END AS comp,
         CASE WHEN src.gpu_comm = 0 AND h.is_comm = 1 THEN 1 ELSE 0 END AS comm,
         CASE WHEN h.type = 'Dataloader' THEN 1 ELSE 0 END AS dataloader
  FROM host_marked h JOIN src ON src.rank = h.rank;

CREATE TEMPORARY VIEW gpu_sets AS
  SELECT k.rank, k.start_ns, k.end_ns,
         CASE WHEN src.gpu_comp = 1 AND k.type = 'Kernel' AND lower(k.name) NOT LIKE '%nccl%'
                   AND lower(k.name) NOT LIKE '%rccl%' THEN 1 ELSE 0 END AS comp,
         CASE WHEN src.gpu_comm = 1 AND (k.type = 'Communication' OR lower(k.name) LIKE '%nccl%'
                                         OR lower(k.name) LIKE '%rccl%') THEN 1 ELSE 0 END AS comm
  FROM kernels k JOIN src ON src.rank = k.rank;

-- busy: computation or communication; active: any host range here
CREATE TEMPORARY VIEW ivl AS
  SELECT h.rank, s.what, h.start_ns, h.end_ns
  FROM host_sets h JOIN sets s
    ON (s.what = 'comp' AND h.comp = 1) OR (s.what = 'comm' AND h.comm = 1)
    OR (s.what = 'busy' AND h.comp + h.comm > 0) OR (s.what = 'dataloader' AND h.dataloader = 1)
    OR s.what = 'active'
  UNION ALL
  SELECT g.rank, s.what, g.start_ns, g.end_ns
  FROM gpu_sets g JOIN sets s
    ON (s.what = 'comp' AND g.comp = 1) OR (s.what = 'comm' AND g.comm = 1)
    OR (s.what = 'busy' AND g.comp + g.comm > 0)
  UNION ALL
  SELECT rank, 'window', start_ns, end_ns FROM counted WHERE counted = 1;

-- clipped to the counted steps, then merged (gaps and islands)
CREATE TEMPORARY VIEW piece AS
  SELECT i.rank, i.what,
         CASE WHEN i.start_ns > c.start_ns THEN i.start_ns ELSE c.start_ns END AS s,
         CASE WHEN i.end_ns < c.end_ns THEN i.end_ns ELSE c.end_ns END AS e
  FROM ivl i
  JOIN counted c ON c.rank = i.rank AND c.counted = 1
                AND i.start_ns < c.end_ns AND i.end_ns > c.start_ns;

CREATE TEMPORARY VIEW piece_prev AS
  SELECT rank, what, s, e,
         MAX(e) OVER (PARTITION BY rank, what ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_e
  FROM piece;

-- the union's length: in start order, each interval adds what lies past
-- the running end of the ones before it (where a new island starts, all)
CREATE TEMPORARY VIEW measure AS
  SELECT rank, what,
         SUM(CASE WHEN prev_e IS NULL OR prev_e <= s THEN e - s
                  WHEN e > prev_e THEN e - prev_e ELSE 0 END) AS ns
  FROM piece_prev
  GROUP BY rank, what;

-- per rank: its counted steps, their lengths' order, its totals
CREATE TEMPORARY VIEW step_order AS
  SELECT rank, dur_ns, busy_ns, wait_ns,
         ROW_NUMBER() OVER (PARTITION BY rank ORDER BY dur_ns) AS k,
         COUNT(*) OVER (PARTITION BY rank) AS n
  FROM step_busy WHERE counted = 1;

CREATE TEMPORARY VIEW step_stat AS
  SELECT rank, MAX(n) AS n,
         AVG(CASE WHEN 2 * k IN (n, n + 1, n + 2) THEN CAST(dur_ns AS DOUBLE) END) AS median_ns,
         MAX(CASE WHEN 100 * k >= 95 * n AND 100 * (k - 1) < 95 * n THEN dur_ns END) AS p95_ns,
         SUM(wait_ns) AS wait_ns,
         SUM(CAST(busy_ns AS DOUBLE)) AS busy_sum,
         SUM(CAST(busy_ns AS DOUBLE) * CAST(busy_ns AS DOUBLE)) AS busy_sq
  FROM step_order GROUP BY rank;

CREATE TEMPORARY VIEW fig AS
  SELECT s.rank, s.n,
         s.median_ns, s.p95_ns, s.wait_ns, s.busy_sum, s.busy_sq,
         COALESCE(SUM(CASE WHEN m.what = 'window' THEN m.ns END), 0) AS window_ns,
         COALESCE(SUM(CASE WHEN m.what = 'comp' THEN m.ns END), 0) AS comp_ns,
         COALESCE(SUM(CASE WHEN m.what = 'comm' THEN m.ns END), 0) AS comm_ns,
         COALESCE(SUM(CASE WHEN m.what = 'busy' THEN m.ns END), 0) AS busy_ns,
         COALESCE(SUM(CASE WHEN m.what = 'dataloader' THEN m.ns END), 0) AS dl_ns,
         COALESCE(SUM(CASE WHEN m.what = 'active' THEN m.ns END), 0) AS active_ns
  FROM step_stat s
  LEFT JOIN measure m ON m.rank = s.rank
  GROUP BY s.rank, s.n, s.median_ns, s.p95_ns, s.wait_ns, s.busy_sum, s.busy_sq;

CREATE TEMPORARY VIEW fig2 AS
  SELECT f.*,
         CASE WHEN comp_ns + comm_ns > busy_ns THEN comp_ns + comm_ns - busy_ns ELSE 0 END AS overlap_ns,
         CASE WHEN window_ns > busy_ns THEN window_ns - busy_ns ELSE 0 END AS idle_ns
  FROM fig f;

CREATE TEMPORARY VIEW per_rank AS
  SELECT f.*,
         CASE WHEN comm_ns > overlap_ns THEN comm_ns - overlap_ns ELSE 0 END AS exposed_ns
  FROM fig2 f;

-- ---- the windows of top_operators.sql and top_kernels.sql, and the host call
-- ---- that launched GPU work (top_*.sql, collectives.sql)

-- the windows: the union of the steps (gaps and islands), the job's and each rank's
CREATE TEMPORARY VIEW job_edges AS
  SELECT start_ns, end_ns,
         CASE WHEN start_ns <= max(end_ns) OVER (ORDER BY start_ns, end_ns
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              THEN 0 ELSE 1 END AS new_island
  FROM steps;

CREATE TEMPORARY VIEW job_window AS
  SELECT min(start_ns) AS s, max(end_ns) AS e
  FROM (SELECT start_ns, end_ns,
               sum(new_island) OVER (ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
        FROM job_edges) x
  GROUP BY island;

CREATE TEMPORARY VIEW rank_edges AS
  SELECT rank, start_ns, end_ns,
         CASE WHEN start_ns <= max(end_ns) OVER (PARTITION BY rank ORDER BY start_ns, end_ns
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
              THEN 0 ELSE 1 END AS new_island
  FROM steps;

CREATE TEMPORARY VIEW rank_window AS
  SELECT rank, min(start_ns) AS s, max(end_ns) AS e
  FROM (SELECT rank, start_ns, end_ns,
               sum(new_island) OVER (PARTITION BY rank ORDER BY start_ns, end_ns
                                     ROWS UNBOUNDED PRECEDING) AS island
        FROM rank_edges) x
  GROUP BY rank, island;

-- GPU work (kernels, copies, sets) that counts, at the host call that
-- launched it: the host event of its process with its correlation id, which
-- lies in the job's window (GPU work counts in full when its call does)
CREATE TEMPORARY VIEW launchers AS
  SELECT rank, pid, thread, correlation, start_ns, end_ns
  FROM (SELECT rank, pid, thread, correlation, start_ns, end_ns,
               row_number() OVER (PARTITION BY rank, pid, correlation
                                  ORDER BY start_ns, end_ns) AS k
        FROM (SELECT rank, pid, thread, correlation, start_ns, end_ns FROM runtime
              UNION ALL SELECT rank, pid, thread, correlation, start_ns, end_ns FROM operators
              UNION ALL SELECT rank, pid, thread, correlation, start_ns, end_ns FROM ranges
              UNION ALL SELECT rank, pid, thread, correlation, start_ns, end_ns FROM marks
              UNION ALL SELECT rank, pid, thread, correlation, start_ns, end_ns FROM communication
              UNION ALL SELECT rank, pid, thread, correlation, start_ns, end_ns FROM memory) h
        WHERE correlation IS NOT NULL AND correlation <> 0) x
  WHERE k = 1;
