-- aggregates/top_kernels.sql: top_kernels.sql over the aggregate tables
-- (`run --aggregates` runs this in its place): the kernels of a job by name
-- from each rank's Kernel Summary rows (agg_kernels: what `gprof-dl summary
-- --view kernel` of that rank's trace alone gives), and their runs by
-- duration (agg_durations), without the events.
--
-- Columns: those of top_kernels.sql, then p50_ns and p95_ns, the median and
-- 95th percentile of the runs' GPU times over all ranks, read from the
-- summed histograms: the upper bound of the bucket that holds the run of
-- rank ceil(q x calls), at most max_ns, so at most 1/8 (12.5 %) above the
-- true value and never below it.
--
-- How it differs from top_kernels.sql over the events: a rank's kernels
-- count when launched in that rank's own window (its ProfileStep ranges),
-- as each host measures it, where the events' recipe and `summary` over the
-- whole job take the union of all ranks' steps; the two agree when no
-- kernel is launched, on a rank, outside its own steps but inside another
-- rank's. The spread columns (per rank) are the same. Calls and totals are
-- sums over ranks, min and max the least and largest, avg_ns the sum over
-- the calls. The spread and the quantiles: views.sql's name_spread and
-- agg_views.sql's name_quantiles.
WITH job_kernels AS (
  SELECT name, sum(calls) AS calls, sum(total_ns) AS total_ns,
         CAST(sum(total_ns) AS DOUBLE) / sum(calls) AS avg_ns, max(max_ns) AS max_ns,
         min(min_ns) AS min_ns
  FROM agg_kernels WHERE rank >= 0
  GROUP BY name
),
ranked AS (
  SELECT j.*, s.ranks, s.rank_min_ns, s.rank_median_ns, s.rank_max_ns, s.max_rank, q.p50_ns,
         q.p95_ns, row_number() OVER (ORDER BY j.total_ns DESC, j.name) AS pos
  FROM job_kernels j LEFT JOIN name_spread s ON s.kind = 'kernel' AND s.name = j.name
  LEFT JOIN name_quantiles q ON q.kind = 'kernel' AND q.name = j.name
)
SELECT r.name, r.calls, r.total_ns, r.avg_ns, r.max_ns, r.min_ns,
       r.ranks, r.rank_min_ns, r.rank_median_ns, r.rank_max_ns, r.max_rank, r.p50_ns, r.p95_ns
FROM ranked r CROSS JOIN params p
WHERE p.top_n = 0 OR r.pos <= p.top_n
ORDER BY r.pos
