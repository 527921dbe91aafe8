-- rank_time.sql - per rank over its counted steps, the columns of
-- `gprof-dl summary --view distributed` (gprof-dl-summary(1), "Distributed
-- Summary"), each time per step (the total over the counted steps / their
-- count) in ns:
--   steps; step mean / median / P95 (nearest rank); busy (step - wait);
--   wait; busy's parts, disjoint, adding up to busy: computation,
--   data_loading, outside (host time outside operators), communication
--   (its own, not overlapped nor wait) and contention (CPU contention:
--   empty where no counted step of the rank has its CPU time, steps.cpu_ns), as
--   step_time.sql gives them per step; comm_total (the union of its
--   communication) and overlap (computation and communication at once),
--   Paddle's figures.
-- Computation: its host Operator ranges that are no communication (nor
-- start inside a communication range of their thread), or on a rank with
-- GPU work, its kernels that are no communication. Communication: the
-- host's communication ranges, or on a rank with communication GPU work,
-- that work. Wait as in step_time.sql. All from the sweep of views.sql
-- (step_parts): no interval joins.
-- Engines: DuckDB and Spark SQL over `gprof-dl export --csv --partitioned`,
-- sqlite over `gprof-dl export --sqlite` (examples/recipes/run); plain SQL
-- with window functions; medians by row_number and count.
-- Not reproduced: GPU work that is communication only because a
-- communication operator launched it (the view follows the CUDA
-- correlation; here a kernel is communication by its type or an
-- nccl/rccl name), and ranks without ProfileStep ranges (the view
-- measures their whole run; here they have no row).
-- params: skip_steps (default 10, as --skip-steps), in views.sql.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
WITH step_order AS (
  SELECT p.*,
         ROW_NUMBER() OVER (PARTITION BY rank ORDER BY dur_ns) AS k,
         COUNT(*) OVER (PARTITION BY rank) AS n
  FROM step_parts p
  WHERE counted = 1
),
-- the totals over the counted steps (the parts per step are the totals /
-- the count: exact where the parts are whole ns, so that they round as
-- the view's sum of each step's part / the count does, a tie aside)
rank_sum AS (
  SELECT rank, MAX(n) AS n,
         AVG(CASE WHEN 2 * k IN (n, n + 1, n + 2) THEN CAST(dur_ns AS DOUBLE) END) AS median_ns,
         MAX(CASE WHEN 100 * k >= 95 * n AND 100 * (k - 1) < 95 * n THEN dur_ns END) AS p95_ns,
         SUM(dur_ns) AS window_ns,
         SUM(wait_ns) AS wait_ns,
         SUM(comp_part) AS comp_part,
         SUM(data_part) AS data_part,
         SUM(host_part) AS host_part,
         SUM(comm_part) AS comm_part,
         SUM(contention_part) AS contention_part,
         SUM(sched_known) AS sched_steps,
         SUM(comp_all_ns) AS comp_all_ns,
         SUM(comm_all_ns) AS comm_all_ns,
         SUM(busy_all_ns) AS busy_all_ns
  FROM step_order
  GROUP BY rank
)
SELECT s.rank, r.host, s.n AS steps,
       CAST(window_ns AS DOUBLE) / n AS step_mean_ns,
       median_ns AS step_median_ns,
       p95_ns AS step_p95_ns,
       CAST(CASE WHEN window_ns > s.wait_ns THEN window_ns - s.wait_ns ELSE 0 END AS DOUBLE) / n AS busy_ns,
       CAST(s.wait_ns AS DOUBLE) / n AS wait_ns,
       comp_part / n AS computation_ns, data_part / n AS data_loading_ns,
       host_part / n AS outside_ns, comm_part / n AS communication_ns,
       CASE WHEN sched_steps > 0 THEN contention_part / n END AS contention_ns,
       CAST(comm_all_ns AS DOUBLE) / n AS comm_total_ns,
       CAST(CASE WHEN comp_all_ns + comm_all_ns > busy_all_ns
                 THEN comp_all_ns + comm_all_ns - busy_all_ns ELSE 0 END AS DOUBLE) / n AS overlap_ns
FROM rank_sum s
JOIN ranks r ON r.rank = s.rank
ORDER BY s.rank
