-- aggregates/top_operators.sql: top_operators.sql over the aggregate tables
-- (`run --aggregates` runs this in its place): the operators of a job by
-- name from each rank's Operator Summary rows (agg_operators: what
-- `gprof-dl summary --view operator` of that rank's trace alone gives),
-- and their calls by duration (agg_durations), without the events.
--
-- Columns: those of top_operators.sql, then self_ns (Self, summed), and
-- p50_ns and p95_ns, the median and 95th percentile of the calls' CPU
-- times over all ranks, read from the summed histograms: the upper bound
-- of the bucket that holds the call of rank ceil(q x calls), at most max_ns,
-- so at most 1/8 (12.5 %) above the true value and never below it.
--
-- How it differs from top_operators.sql over the events: each rank's calls
-- are clipped to that rank's own window (its ProfileStep ranges), as each
-- host measures it, where the events' recipe and `summary` over the whole
-- job clip every call to the union of all ranks' steps. The two give the
-- same figures when no operator runs, on a rank, outside its own steps but
-- inside another rank's; the spread columns (per rank) are the same.
-- Calls, totals, Self and GPU totals are sums over ranks; min and max the
-- least and largest; averages the sums over the calls. The spread and the
-- quantiles: views.sql's name_spread and
-- agg_views.sql's name_quantiles.
WITH rank_ops AS (
  SELECT rank, name, calls, total_ns, self_ns, min_ns, max_ns, gpu_total_ns, gpu_min_ns,
         gpu_max_ns
  FROM agg_operators WHERE rank >= 0
),
job_ops AS (
  SELECT name, sum(calls) AS calls, sum(total_ns) AS total_ns,
         CAST(sum(total_ns) AS DOUBLE) / sum(calls) AS avg_ns, max(max_ns) AS max_ns,
         min(min_ns) AS min_ns, sum(gpu_total_ns) AS gpu_total_ns,
         CAST(sum(gpu_total_ns) AS DOUBLE) / sum(calls) AS gpu_avg_ns,
         max(gpu_max_ns) AS gpu_max_ns, min(gpu_min_ns) AS gpu_min_ns, sum(self_ns) AS self_ns
  FROM rank_ops
  GROUP BY name
),
ranked AS (
  SELECT j.*, s.ranks, s.rank_min_ns, s.rank_median_ns, s.rank_max_ns, s.max_rank, q.p50_ns,
         q.p95_ns, row_number() OVER (ORDER BY j.total_ns DESC, j.name) AS pos
  FROM job_ops j LEFT JOIN name_spread s ON s.kind = 'operator' AND s.name = j.name
  LEFT JOIN name_quantiles q ON q.kind = 'operator' AND q.name = j.name
)
SELECT r.name, r.calls, r.total_ns, r.avg_ns, r.max_ns, r.min_ns,
       r.gpu_total_ns, r.gpu_avg_ns, r.gpu_max_ns, r.gpu_min_ns, r.ranks, r.rank_min_ns,
       r.rank_median_ns, r.rank_max_ns, r.max_rank, r.self_ns, r.p50_ns, r.p95_ns
FROM ranked r CROSS JOIN params p
WHERE p.top_n = 0 OR r.pos <= p.top_n
ORDER BY r.pos
