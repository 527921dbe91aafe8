-- top_kernels.sql: the GPU kernels of a job by name, as `gprof-dl summary
-- --view kernel` over all the job's traces gives them (Calls, GPU Total,
-- Avg, Max, Min), and their spread over the ranks: each rank's GPU Total of
-- the name as `summary --view kernel` of that rank's trace alone gives it,
-- then the least, the median and the largest over the ranks that ran it, and
-- the rank of the largest (the lowest such rank on a tie).
--
-- Engines: DuckDB, Spark SQL, sqlite (3.25 or later), as it is: plain SQL
-- (CASE for greatest/least, CAST(... AS DOUBLE) for a division). Tables of
-- the SQL exports (gprof-dl-export(1)): kernels, the host tables that carry
-- correlation ids (runtime, operators, ranges, marks, communication,
-- memory), steps.
--
-- Parameters (the params view of views.sql): top_n, the rows printed,
-- longest Total first (0: all). skip_steps is not used: the Kernel view
-- counts every step.
--
-- Rules, as gprof-dl's (gprof-dl-summary(1), "Kernel Summary" and "GPU work"):
--  - a kernel is a row of the kernels table (Kernel, and Communication on a
--    GPU stream: NCCL kernels), counted in full, by name;
--  - it counts when the host call that launched it (the host event of its
--    process with its correlation id: the CUDA API call) lies in the window,
--    even when the kernel ran past it; a kernel with no such call counts when
--    it lies in the window itself. The window is the union of every
--    ProfileStep range of the job (of the rank alone, for the spread), or the
--    whole run where there is no step; "lies in": a positive part does (for
--    an instant or a zero-length range: its time, bounds included).
-- What SQL does not reproduce here:
--  - the columns Mean Blocks per SM and Mean Est. Achieved Occupancy (the
--    kernels table has each run's blocks_per_sm and
--    est_achieved_occupancy_pct: weight them by dur_ns for the view's means)
--    and GPU Ratio;
--  - where two host events of one process carry the same correlation id,
--    gprof-dl takes the first in its track order; here the earliest;
--  - an imported trace whose GPU work has no pid (its file's only process
--    launched it) is matched to no call here;
--  - the window is made of the steps table's steps, which leaves out a step
--    of no length or one that never ended (open at exit).
-- Times are integer ns; avg_ns and rank_median_ns are real.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
-- the kernels that count in the job's window (views.sql: kernel_spans)
WITH job_counted AS (
  SELECT a.name, a.dur_ns FROM kernel_spans a
  WHERE NOT EXISTS (SELECT 1 FROM steps)
     OR EXISTS (SELECT 1 FROM job_window w
                WHERE (a.a_start < w.e AND a.a_end > w.s)
                   OR (a.a_start = a.a_end AND a.a_start >= w.s AND a.a_start <= w.e))
),
job_kernels AS (
  SELECT name, count(*) AS calls, sum(dur_ns) AS total_ns,
         CAST(sum(dur_ns) AS DOUBLE) / count(*) AS avg_ns, max(dur_ns) AS max_ns,
         min(dur_ns) AS min_ns
  FROM job_counted
  GROUP BY name
),
ranked AS (
  SELECT j.name, j.calls, j.total_ns, j.avg_ns, j.max_ns, j.min_ns,
         s.ranks, s.rank_min_ns, s.rank_median_ns, s.rank_max_ns, s.max_rank,
         row_number() OVER (ORDER BY j.total_ns DESC, j.name) AS pos
  FROM job_kernels j
  LEFT JOIN (SELECT * FROM name_spread WHERE kind = 'kernel') s ON s.name = j.name
)
SELECT r.name, r.calls, r.total_ns, r.avg_ns, r.max_ns, r.min_ns,
       r.ranks, r.rank_min_ns, r.rank_median_ns, r.rank_max_ns, r.max_rank
FROM ranked r CROSS JOIN params p
WHERE p.top_n = 0 OR r.pos <= p.top_n
ORDER BY r.pos
