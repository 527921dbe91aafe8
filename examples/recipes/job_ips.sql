-- job_ips.sql: the job's throughput, as the Perf Summary of `gprof-dl
-- summary` (and `gprof-dl bench`) gives it for a job of several ranks: one
-- row with the job steps compared, whether ips is in samples/s
-- (by_samples 1) or steps/s (0), batch_cost avg, max and min over the job
-- steps, and ips avg, max and min.
--
-- Rules (lib/analysis/dist/jobperf.h, gprof-dl-bench(1)):
--  - a rank's counted steps: all but the first skip_steps, never more than
--    half of them (views.sql's counted);
--  - job step g: step g of every rank, for the numbers every rank counted
--    (from the latest first counted step to the earliest last one);
--  - its batch_cost: from the last rank's end of step g - 1 (the first job
--    step: from the first rank's start of it) to the last rank's end of g;
--  - ips in samples/s when every counted step of every rank knows its
--    samples, else steps/s (a job step is then 1); avg = all samples / all
--    batch_cost, max and min per job step.
-- Not reproduced: reader_cost (DataLoader time per step) and the notes.
-- Reads the steps (steps.samples, or agg_steps.samples with run
-- --aggregates) and views.sql's counted.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
WITH cs AS (
  SELECT c.rank, c.step, c.start_ns, c.end_ns, s.samples
  FROM counted c
  JOIN steps s ON s.rank = c.rank AND s.step = c.step
  WHERE c.counted = 1 AND c.rank >= 0
),
span AS (
  SELECT MAX(f) AS g0, MIN(l) AS g1
  FROM (SELECT rank, MIN(step) AS f, MAX(step) AS l FROM cs GROUP BY rank) x
),
unit AS (
  SELECT CASE WHEN SUM(CASE WHEN samples IS NULL OR samples = 0 THEN 1 ELSE 0 END) = 0
              THEN 1 ELSE 0 END AS by_samples
  FROM cs
),
js AS (
  SELECT cs.step, MIN(cs.start_ns) AS first_start, MAX(cs.end_ns) AS last_end,
         SUM(cs.samples) AS samples
  FROM cs CROSS JOIN span
  WHERE cs.step >= span.g0 AND cs.step <= span.g1
  GROUP BY cs.step
),
jb AS (
  SELECT js.step, CASE WHEN u.by_samples = 1 THEN js.samples ELSE 1 END AS n,
         js.last_end - COALESCE(LAG(js.last_end) OVER (ORDER BY js.step), js.first_start) AS batch_ns
  FROM js CROSS JOIN unit u
)
SELECT COUNT(*) AS job_steps, MAX(u.by_samples) AS by_samples,
       CAST(SUM(batch_ns) AS DOUBLE) / COUNT(*) AS batch_cost_avg_ns,
       MAX(batch_ns) AS batch_cost_max_ns, MIN(batch_ns) AS batch_cost_min_ns,
       CAST(SUM(n) AS DOUBLE) * 1e9 / SUM(batch_ns) AS ips_avg,
       MAX(CAST(n AS DOUBLE) * 1e9 / batch_ns) AS ips_max,
       MIN(CAST(n AS DOUBLE) * 1e9 / batch_ns) AS ips_min
FROM jb CROSS JOIN unit u
