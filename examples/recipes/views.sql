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
--   ops, kernel_spans  the calls the Operator and Kernel views count
--                    (top_operators.sql, top_kernels.sql)
--   name_totals, name_spread  each rank's total of an operator or kernel
--                    name, and the spread of those totals over the ranks
--                    (top_*.sql; agg_views.sql gives name_totals from the
--                    aggregate tables)
--   coll_calls       the communication calls with their bytes and group
--                    (collectives.sql)
-- The views' names are the recipes' to use; a recipe's own CTE of the same
-- name hides the view in that recipe only.

CREATE TEMPORARY VIEW params AS SELECT 10 AS skip_steps, 20 AS top_n;

-- each rank's ProfileStep ranges (steps.step: 0, 1, ... in start order)
CREATE TEMPORARY VIEW rank_steps AS
  SELECT rank, step, start_ns, end_ns, dur_ns, cpu_ns, runq_ns,
         COUNT(*) OVER (PARTITION BY rank) AS n
  FROM steps
  WHERE rank >= 0;

-- counted: all but the first skip_steps, never more than half (floor(n / 2));
-- skipped: how many are not, nsteps: the rank's steps
CREATE TEMPORARY VIEW counted AS
  SELECT r.rank, r.step, r.start_ns, r.end_ns, r.dur_ns, r.cpu_ns, r.runq_ns, r.n AS nsteps,
         CAST(CASE WHEN p.skip_steps < (r.n - r.n % 2) / 2 THEN p.skip_steps
                   ELSE (r.n - r.n % 2) / 2 END AS BIGINT) AS skipped,
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

-- a call's wait lies at its start: [start, start + wait), clipped to the end
-- of the counted step the call started in (a GPU call: its host call); W,
-- the rank's wait, is the union of these (gloo's calls on two threads wait
-- for the same rank at the same time, once)
CREATE TEMPORARY VIEW wait_ivl AS
  SELECT w.rank, c.step, w.start_ns AS s,
         CASE WHEN w.start_ns < c.end_ns AND w.start_ns + w.wait_ns > c.end_ns THEN c.end_ns
              ELSE w.start_ns + w.wait_ns END AS e
  FROM call_wait w
  JOIN counted c ON c.rank = w.rank AND c.counted = 1
                AND w.at_ns >= c.start_ns AND w.at_ns < c.end_ns
  WHERE w.wait_ns > 0;

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

-- the sets a step is split by (gprof-dl-summary(1), "The parts of a
-- step"), each interval marked with those it is in: D (data: Dataloader
-- ranges), C (computation: host operators on a rank without GPU work, else
-- kernels that are no communication), M (communication: the host's
-- communication ranges on a rank without communication GPU work, else that
-- work)
CREATE TEMPORARY VIEW host_sets AS
  SELECT h.rank, h.start_ns, h.end_ns,
         CASE WHEN src.gpu_comp = 0 AND h.is_comm = 0 AND h.type = 'Operator'
                   AND (h.comm_end IS NULL OR h.start_ns >= h.comm_end) THEN 1 ELSE 0 END AS comp,
         CASE WHEN src.gpu_comm = 0 AND h.is_comm = 1 THEN 1 ELSE 0 END AS comm,
         CASE WHEN h.type = 'Dataloader' AND h.is_comm = 0 THEN 1 ELSE 0 END AS dataloader
  FROM host_marked h JOIN src ON src.rank = h.rank;

CREATE TEMPORARY VIEW gpu_sets AS
  SELECT k.rank, k.start_ns, k.end_ns,
         CASE WHEN src.gpu_comp = 1 AND k.type = 'Kernel' AND lower(k.name) NOT LIKE '%nccl%'
                   AND lower(k.name) NOT LIKE '%rccl%' THEN 1 ELSE 0 END AS comp,
         CASE WHEN src.gpu_comm = 1 AND (k.type = 'Communication' OR lower(k.name) LIKE '%nccl%'
                                         OR lower(k.name) LIKE '%rccl%') THEN 1 ELSE 0 END AS comm
  FROM kernels k JOIN src ON src.rank = k.rank;

-- the sweep: every interval of a rank that matters (its counted steps, W,
-- D, C, M), with its sets; each gives +1 to them at its start and -1 at its
-- end (the step's +/- its number, so that the running sum names the step);
-- first the counted steps and W, the same for agg_views.sql's part_ivl
CREATE TEMPORARY VIEW step_wait_ivl AS
  SELECT rank, start_ns AS s, end_ns AS e, 1 AS i_step, step AS i_num,
         0 AS i_w, 0 AS i_d, 0 AS i_c, 0 AS i_m
  FROM counted WHERE counted = 1
  UNION ALL
  SELECT rank, s, e, 0, 0, 1, 0, 0, 0 FROM wait_ivl WHERE e > s;

-- ... then the parts' sets D, C, M
CREATE TEMPORARY VIEW part_ivl AS
  SELECT rank, s, e, i_step, i_num, i_w, i_d, i_c, i_m FROM step_wait_ivl
  UNION ALL
  SELECT rank, start_ns, end_ns, 0, 0, 0, dataloader, comp, comm
  FROM host_sets WHERE end_ns > start_ns AND dataloader + comp + comm > 0
  UNION ALL
  SELECT rank, start_ns, end_ns, 0, 0, 0, 0, comp, comm
  FROM gpu_sets WHERE end_ns > start_ns AND comp + comm > 0;

-- from each boundary to the next, how many of each set are open: running
-- sums over the boundaries in time order (of several at one time, only the
-- last is followed by a piece of non-zero length, and it has them all)
CREATE TEMPORARY VIEW part_runs AS
  SELECT rank, t,
         LEAD(t) OVER (PARTITION BY rank ORDER BY t) AS t_next,
         SUM(d_step) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS n_step,
         SUM(d_num) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS step,
         SUM(d_w) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS n_w,
         SUM(d_d) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS n_d,
         SUM(d_c) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS n_c,
         SUM(d_m) OVER (PARTITION BY rank ORDER BY t ROWS UNBOUNDED PRECEDING) AS n_m
  FROM (SELECT i.rank, CASE WHEN x.sgn = 1 THEN i.s ELSE i.e END AS t,
               x.sgn * i_step AS d_step, x.sgn * i_num AS d_num, x.sgn * i_w AS d_w,
               x.sgn * i_d AS d_d, x.sgn * i_c AS d_c, x.sgn * i_m AS d_m
        FROM part_ivl i CROSS JOIN (SELECT 1 AS sgn UNION ALL SELECT -1 AS sgn) x) b;

-- per counted step, each piece of it (of non-zero length) given to the
-- first set open in it:
-- wait (W), data (D \ W), computation (C \ (W u D)), communication
-- (M \ (W u D u C)); and the unions of C, of M and of both (Paddle's
-- figures)
CREATE TEMPORARY VIEW step_sets AS
  SELECT rank, step,
         SUM(CASE WHEN n_w > 0 THEN t_next - t ELSE 0 END) AS wait_ns,
         SUM(CASE WHEN n_w = 0 AND n_d > 0 THEN t_next - t ELSE 0 END) AS data_ns,
         SUM(CASE WHEN n_w = 0 AND n_d = 0 AND n_c > 0 THEN t_next - t ELSE 0 END) AS comp_ns,
         SUM(CASE WHEN n_w = 0 AND n_d = 0 AND n_c = 0 AND n_m > 0 THEN t_next - t ELSE 0 END) AS comm_ns,
         SUM(CASE WHEN n_c > 0 THEN t_next - t ELSE 0 END) AS comp_all_ns,
         SUM(CASE WHEN n_m > 0 THEN t_next - t ELSE 0 END) AS comm_all_ns,
         SUM(CASE WHEN n_c > 0 OR n_m > 0 THEN t_next - t ELSE 0 END) AS busy_all_ns
  FROM part_runs
  WHERE n_step = 1 AND t_next > t
  GROUP BY rank, step;

-- per step: counted or not; for a counted one, its wait and busy time
-- (step - wait), and the measured sets
CREATE TEMPORARY VIEW step_busy AS
  SELECT c.rank, c.step, c.start_ns, c.dur_ns, c.counted, c.nsteps, c.skipped, c.cpu_ns, c.runq_ns,
         CASE WHEN c.counted = 1 THEN COALESCE(p.wait_ns, 0) END AS wait_ns,
         CASE WHEN c.counted = 0 THEN NULL
              WHEN c.dur_ns > COALESCE(p.wait_ns, 0) THEN c.dur_ns - COALESCE(p.wait_ns, 0)
              ELSE 0 END AS busy_ns,
         COALESCE(p.data_ns, 0) AS data_ns, COALESCE(p.comp_ns, 0) AS comp_ns,
         COALESCE(p.comm_ns, 0) AS comm_ns, COALESCE(p.comp_all_ns, 0) AS comp_all_ns,
         COALESCE(p.comm_all_ns, 0) AS comm_all_ns, COALESCE(p.busy_all_ns, 0) AS busy_all_ns
  FROM counted c
  LEFT JOIN step_sets p ON p.rank = c.rank AND p.step = c.step;

-- the parts of busy, before CPU contention: host = the rest of the step;
-- the contention to take out: the step thread's run-queue time in it, at
-- most busy (known where its CPU time is: steps.cpu_ns > 0; else 0)
CREATE TEMPORARY VIEW step_carve AS
  SELECT b.rank, b.step, b.start_ns, b.dur_ns, b.counted, b.nsteps, b.skipped, b.wait_ns, b.busy_ns,
         s.gpu_comp,
         b.comp_all_ns, b.comm_all_ns, b.busy_all_ns,
         CASE WHEN b.cpu_ns > 0 THEN 1 ELSE 0 END AS sched_known,
         CAST(b.data_ns AS DOUBLE) AS d, CAST(b.comp_ns AS DOUBLE) AS c,
         CAST(b.comm_ns AS DOUBLE) AS m,
         CAST(CASE WHEN b.busy_ns > b.data_ns + b.comp_ns + b.comm_ns
                   THEN b.busy_ns - b.data_ns - b.comp_ns - b.comm_ns ELSE 0 END AS DOUBLE) AS h,
         CAST(CASE WHEN b.cpu_ns > 0 AND b.runq_ns > 0
                   THEN CASE WHEN b.runq_ns < b.busy_ns THEN b.runq_ns ELSE b.busy_ns END
                   ELSE 0 END AS DOUBLE) AS q,
         CAST(CASE WHEN b.cpu_ns > 0 AND b.runq_ns > 0 THEN b.runq_ns ELSE 0 END AS DOUBLE) AS rq
  FROM step_busy b JOIN src s ON s.rank = b.rank;

-- what each group of parts gives: on a rank with GPU work, data and host
-- first (t1), then computation and communication (t2); else all four (t1)
CREATE TEMPORARY VIEW step_take AS
  SELECT x.*,
         CASE WHEN q > 0 AND t1 > 0 THEN CASE WHEN q < t1 THEN q ELSE t1 END ELSE 0 END AS take1
  FROM (SELECT c.*,
               CASE WHEN gpu_comp = 1 THEN d + h ELSE d + c + m + h END AS t1,
               CASE WHEN gpu_comp = 1 THEN c + m ELSE 0 END AS t2
        FROM step_carve c) x;

CREATE TEMPORARY VIEW step_take2 AS
  SELECT x.*,
         CASE WHEN q - take1 > 0 AND t2 > 0
              THEN CASE WHEN q - take1 < t2 THEN q - take1 ELSE t2 END ELSE 0 END AS take2
  FROM step_take x;

-- per step (all of them, so that step_time.sql reads this view alone): for
-- a counted one its wait and busy time, and busy's parts after the
-- contention is taken out of them in proportion to their size; they add
-- up to busy; runq_all: the step thread's whole run-queue time in the step
-- (in its wait too; 0 unknown)
CREATE TEMPORARY VIEW step_parts AS
  SELECT rank, step, start_ns, dur_ns, counted, nsteps, skipped, wait_ns, busy_ns, sched_known,
         comp_all_ns, comm_all_ns, busy_all_ns,
         CASE WHEN counted = 0 THEN NULL
              WHEN take1 > 0 THEN d - take1 * d / t1 ELSE d END AS data_part,
         CASE WHEN counted = 0 THEN NULL
              WHEN gpu_comp = 0 AND take1 > 0 THEN c - take1 * c / t1
              WHEN gpu_comp = 1 AND take2 > 0 THEN c - take2 * c / t2 ELSE c END AS comp_part,
         CASE WHEN counted = 0 THEN NULL
              WHEN gpu_comp = 0 AND take1 > 0 THEN m - take1 * m / t1
              WHEN gpu_comp = 1 AND take2 > 0 THEN m - take2 * m / t2 ELSE m END AS comm_part,
         CASE WHEN counted = 0 THEN NULL
              WHEN take1 > 0 THEN h - take1 * h / t1 ELSE h END AS host_part,
         CASE WHEN counted = 0 THEN NULL ELSE take1 + take2 END AS contention_part,
         CASE WHEN counted = 0 THEN NULL ELSE rq END AS runq_all
  FROM step_take2;

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

-- ---- the Operator and Kernel views' calls (top_operators.sql,
-- ---- top_kernels.sql) and their totals' spread over the ranks

-- the operator calls the Operator view counts (the rules: top_operators.sql):
-- ranges of type Operator on a host thread, in the store's order (start,
-- longer first: idx), less each call that redispatches to itself, folded
-- into its parent (the host range just before, of its name and type, that
-- contains it and has no other child)
CREATE TEMPORARY VIEW ops AS
  WITH op_events AS (
    SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, type FROM operators
    UNION ALL SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, type FROM ranges
    UNION ALL SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, type FROM runtime
    UNION ALL SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, type FROM communication
  ),
  -- with the range just before
  op_ordered AS (
    SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, type,
           row_number() OVER (PARTITION BY rank, pid, thread
                              ORDER BY start_ns, dur_ns DESC, name, type) AS idx,
           lag(name) OVER (PARTITION BY rank, pid, thread
                           ORDER BY start_ns, dur_ns DESC, name, type) AS p_name,
           lag(type) OVER (PARTITION BY rank, pid, thread
                           ORDER BY start_ns, dur_ns DESC, name, type) AS p_type,
           lag(end_ns) OVER (PARTITION BY rank, pid, thread
                             ORDER BY start_ns, dur_ns DESC, name, type) AS p_end
    FROM op_events
  ),
  -- an operator right after a range of its name and type that contains it
  fold_candidates AS (
    SELECT rank, pid, thread, idx, end_ns, p_end FROM op_ordered
    WHERE type = 'Operator' AND p_type = type AND p_name = name AND end_ns <= p_end
  ),
  -- ... and that range's only child
  folded AS (
    SELECT c.rank, c.pid, c.thread, c.idx
    FROM fold_candidates c
    LEFT JOIN op_ordered o
      ON o.rank = c.rank AND o.pid = c.pid AND o.thread = c.thread
     AND o.idx > c.idx AND o.end_ns > c.end_ns AND o.end_ns <= c.p_end
    GROUP BY c.rank, c.pid, c.thread, c.idx
    HAVING count(o.idx) = 0
  )
  SELECT o.rank, o.pid, o.thread, o.idx, o.name, o.start_ns, o.end_ns, o.dur_ns
  FROM op_ordered o
  JOIN threads t ON t.rank = o.rank AND t.pid = o.pid AND t.thread = o.thread
  LEFT JOIN folded f ON f.rank = o.rank AND f.pid = o.pid AND f.thread = o.thread
                    AND f.idx = o.idx
  WHERE o.type = 'Operator' AND t.kind = 'host' AND f.idx IS NULL;

-- each kernel (the kernels table: Kernel, and Communication on a GPU
-- stream) with the span that decides whether it counts (the rules:
-- top_kernels.sql): its launching call's, else its own
CREATE TEMPORARY VIEW kernel_spans AS
  SELECT k.rank, k.name, k.dur_ns,
         CASE WHEN c.pid IS NULL THEN k.start_ns ELSE c.start_ns END AS a_start,
         CASE WHEN c.pid IS NULL THEN k.end_ns ELSE c.end_ns END AS a_end
  FROM kernels k
  LEFT JOIN launchers c ON c.rank = k.rank AND c.pid = k.pid AND c.correlation = k.correlation;

-- each rank's total of a name as `summary --view operator` (kind
-- 'operator': CPU Total) or `--view kernel` (kind 'kernel': GPU Total) of
-- that rank's trace alone gives it: its calls in the rank's own window
-- (CPU time clipped to it; a kernel in full)
CREATE TEMPORARY VIEW name_totals AS
  SELECT 'operator' AS kind, c.rank, c.name,
         sum(CASE WHEN n.n IS NULL THEN c.dur_ns ELSE c.clipped END) AS total_ns
  FROM (SELECT o.rank, o.pid, o.thread, o.idx, o.name, o.dur_ns,
               sum(CASE WHEN w.s IS NULL THEN 0
                        ELSE (CASE WHEN o.end_ns < w.e THEN o.end_ns ELSE w.e END)
                           - (CASE WHEN o.start_ns > w.s THEN o.start_ns ELSE w.s END) END)
                 AS clipped,
               count(w.s) AS hits
        FROM ops o LEFT JOIN rank_window w
          ON w.rank = o.rank AND o.start_ns <= w.e AND o.end_ns >= w.s
        WHERE o.rank >= 0
        GROUP BY o.rank, o.pid, o.thread, o.idx, o.name, o.dur_ns) c
  LEFT JOIN (SELECT rank, count(*) AS n FROM steps GROUP BY rank) n ON n.rank = c.rank
  WHERE n.n IS NULL OR c.clipped > 0 OR (c.dur_ns = 0 AND c.hits > 0)
  GROUP BY c.rank, c.name
  UNION ALL
  SELECT 'kernel' AS kind, a.rank, a.name, sum(a.dur_ns) AS total_ns
  FROM kernel_spans a
  WHERE a.rank >= 0
    AND (NOT EXISTS (SELECT 1 FROM steps t WHERE t.rank = a.rank)
         OR EXISTS (SELECT 1 FROM rank_window w
                    WHERE w.rank = a.rank
                      AND ((a.a_start < w.e AND a.a_end > w.s)
                           OR (a.a_start = a.a_end AND a.a_start >= w.s
                               AND a.a_start <= w.e))))
  GROUP BY a.rank, a.name;

-- the spread of each name's rank totals over the ranks that have it: the
-- least, the median and the largest, and the rank of the largest (the
-- lowest such rank on a tie)
CREATE TEMPORARY VIEW name_spread AS
  SELECT kind, name, max(n) AS ranks, min(total_ns) AS rank_min_ns,
         max(total_ns) AS rank_max_ns,
         avg(CASE WHEN 2 * k IN (n, n + 1, n + 2) THEN CAST(total_ns AS DOUBLE) END)
           AS rank_median_ns,
         max(CASE WHEN k_desc = 1 THEN rank END) AS max_rank
  FROM (SELECT kind, rank, name, total_ns,
               row_number() OVER (PARTITION BY kind, name ORDER BY total_ns, rank) AS k,
               row_number() OVER (PARTITION BY kind, name ORDER BY total_ns DESC, rank) AS k_desc,
               count(*) OVER (PARTITION BY kind, name) AS n
        FROM name_totals) o
  GROUP BY kind, name;

-- the communication calls the Collective Summary counts, with their details
-- (collectives.sql; gprof-dl-summary(1), "Communication calls"): a rank's
-- host calls, or on a rank with communication kernels each host call's
-- kernels from first start to last end, and each kernel no call launched;
-- at_ns places a call in a step (its host call's start)
CREATE TEMPORARY VIEW coll_calls AS
  WITH host_threads AS (
    SELECT rank, pid, thread FROM threads WHERE kind = 'host' AND rank >= 0
  ),
  -- host ranges that are communication calls, with their details
  named_ranges AS (
    SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name FROM operators
    UNION ALL SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name FROM ranges
    UNION ALL SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name FROM runtime
  ),
  call_events AS (
    SELECT c.rank, c.pid, c.thread, c.start_ns, c.end_ns, c.dur_ns, c.name,
           c.bytes, c.coll_seq, coalesce(c.process_group, '') AS pg, c.group_size, c.peer
    FROM communication c
    UNION ALL
    SELECT n.rank, n.pid, n.thread, n.start_ns, n.end_ns, n.dur_ns, n.name,
           NULL, NULL, '', NULL, NULL
    FROM named_ranges n
    WHERE instr(n.name, ':') > 1 AND length(n.name) > instr(n.name, ':')
      AND lower(substr(n.name, 1, instr(n.name, ':') - 1)) IN ('gloo', 'nccl', 'mpi', 'ucc')
  ),
  host_calls_all AS (
    SELECT e.*,
           max(e.end_ns) OVER (PARTITION BY e.rank, e.pid, e.thread ORDER BY e.start_ns, e.dur_ns DESC
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM call_events e
    JOIN host_threads t ON t.rank = e.rank AND t.pid = e.pid AND t.thread = e.thread
  ),
  host_calls AS (
    SELECT rank, pid, thread, start_ns, end_ns, dur_ns, name, bytes, coll_seq, pg, group_size, peer,
           row_number() OVER (PARTITION BY rank, pid, thread ORDER BY start_ns) AS cid
    FROM host_calls_all
    WHERE prev_end IS NULL OR start_ns >= prev_end
  ),
  comm_ops AS (
    SELECT rank, pid, thread, start_ns, end_ns FROM communication
    UNION ALL
    SELECT rank, pid, thread, start_ns, end_ns FROM named_ranges
    WHERE lower(substr(name, 1, 5)) IN ('nccl:', 'gloo:') OR lower(substr(name, 1, 4)) IN ('mpi:', 'ucc:')
       OR lower(substr(name, 1, 6)) = 'c10d::' OR lower(substr(name, 1, 18)) = 'record_param_comms'
       OR lower(substr(name, 1, 11)) IN ('c_allreduce', 'c_allgather', 'c_broadcast')
       OR lower(substr(name, 1, 15)) = 'c_reducescatter' OR lower(substr(name, 1, 9)) IN ('c_reduce_', 'c_scatter')
       OR lower(substr(name, 1, 12)) IN ('partial_send', 'partial_recv')
       OR lower(substr(name, 1, 8)) = 'alltoall'
       OR lower(substr(name, 1, 7)) IN ('send_v2', 'recv_v2', 'barrier')
       OR lower(substr(name, 1, 17)) = 'partial_allgather'
  ),
  gpu_work AS (
    SELECT k.rank, k.pid, k.start_ns, k.end_ns, k.dur_ns, k.name, k.type,
           l.thread AS l_thread, l.start_ns AS l_start, l.end_ns AS l_end
    FROM kernels k
    LEFT JOIN launchers l ON l.rank = k.rank AND l.pid = k.pid AND l.correlation = k.correlation
    WHERE k.rank >= 0
  ),
  gpu_comm AS (
    SELECT g.*, row_number() OVER (PARTITION BY g.rank ORDER BY g.start_ns, g.end_ns, g.name) AS kid
    FROM gpu_work g
    WHERE g.type = 'Communication' OR lower(g.name) LIKE '%nccl%' OR lower(g.name) LIKE '%rccl%'
       OR (g.l_thread IS NOT NULL
           AND EXISTS (SELECT 1 FROM comm_ops o
                       WHERE o.rank = g.rank AND o.pid = g.pid AND o.thread = g.l_thread
                         AND o.start_ns <= g.l_start AND g.l_end <= o.end_ns))
  ),
  -- each host call with the communication kernels launched inside it, and
  -- the kernels no host call launched
  joined AS (
    SELECT coalesce(h.rank, g.rank) AS rank, h.pid, h.thread, h.cid, h.start_ns AS h_start,
           h.dur_ns AS h_dur, h.name AS h_name, h.bytes, h.coll_seq, h.pg, h.group_size, h.peer,
           g.kid, g.start_ns AS g_start, g.end_ns AS g_end, g.name AS g_name
    FROM host_calls h
    FULL OUTER JOIN gpu_comm g
      ON g.rank = h.rank AND g.pid = h.pid AND g.l_thread = h.thread
     AND h.start_ns <= g.l_start AND g.l_end <= h.end_ns
  ),
  grouped AS (
    SELECT rank, pid, thread, cid, h_start, h_dur, h_name, bytes, coll_seq, pg, group_size, peer,
           min(g_start) AS g_start, max(g_end) AS g_end, min(g_name) AS g_name,
           count(g_start) AS kernels
    FROM (SELECT j.*, CASE WHEN j.cid IS NULL THEN j.kid END AS alone FROM joined j) x
    GROUP BY rank, pid, thread, cid, h_start, h_dur, h_name, bytes, coll_seq, pg, group_size,
             peer, alone
  ),
  by_mode AS (
    SELECT g.*, max(CASE WHEN g.kernels > 0 THEN 1 ELSE 0 END) OVER (PARTITION BY g.rank) AS gpu_rank
    FROM grouped g
  )
  -- a rank's calls: its host calls, or on a rank with communication kernels
  -- each host call's kernels from first start to last end, and each kernel
  -- no call launched
  SELECT rank,
         CASE WHEN gpu_rank = 1 THEN g_start ELSE h_start END AS start_ns,
         CASE WHEN gpu_rank = 1 THEN g_end - g_start ELSE h_dur END AS dur_ns,
         CASE WHEN cid IS NULL THEN g_start ELSE h_start END AS at_ns,
         coalesce(thread, -1) AS thread, coalesce(h_name, g_name) AS name,
         bytes, coll_seq, coalesce(pg, '') AS pg, group_size, peer
  FROM by_mode
  WHERE (gpu_rank = 0 AND cid IS NOT NULL) OR (gpu_rank = 1 AND kernels > 0);
