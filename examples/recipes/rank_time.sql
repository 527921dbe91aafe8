-- rank_time.sql - per rank over its counted steps, the columns of
-- `gprof-dl summary --view distributed` (gprof-dl-summary(1), "Distributed
-- Summary"), each time per step (the total over the counted steps / their
-- count) in ns, with its share (%) of the rank's step time:
--   steps, step mean / median / P95 (nearest rank), computation,
--   communication, overlap, exposed, wait, idle, busy (step - wait).
-- Computation: the union of the rank's host Operator ranges that are no
-- communication (nor start inside a communication range of their thread),
-- or on a rank with GPU work, of its kernels that are no communication.
-- Communication: the union of the host's communication ranges, or on a
-- rank with communication GPU work, of that work. Both clipped to the
-- counted steps; intervals merged by gaps and islands. Wait as in
-- step_time.sql.
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
SELECT p.rank, r.host, p.n AS steps,
       CAST(window_ns AS DOUBLE) / n AS step_mean_ns,
       median_ns AS step_median_ns,
       p95_ns AS step_p95_ns,
       CAST(comp_ns AS DOUBLE) / n AS computation_ns,
       CAST(comp_ns AS DOUBLE) * 100 / window_ns AS computation_pct,
       CAST(comm_ns AS DOUBLE) / n AS communication_ns,
       CAST(comm_ns AS DOUBLE) * 100 / window_ns AS communication_pct,
       CAST(overlap_ns AS DOUBLE) / n AS overlap_ns,
       CAST(overlap_ns AS DOUBLE) * 100 / window_ns AS overlap_pct,
       CAST(exposed_ns AS DOUBLE) / n AS exposed_ns,
       CAST(exposed_ns AS DOUBLE) * 100 / window_ns AS exposed_pct,
       CAST(p.wait_ns AS DOUBLE) / n AS wait_ns,
       CAST(p.wait_ns AS DOUBLE) * 100 / window_ns AS wait_pct,
       CAST(idle_ns AS DOUBLE) / n AS idle_ns,
       CAST(idle_ns AS DOUBLE) * 100 / window_ns AS idle_pct,
       busy_sum / n AS busy_ns
FROM per_rank p
JOIN ranks r ON r.rank = p.rank
ORDER BY p.rank
