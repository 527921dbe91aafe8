-- straggler.sql - the straggler of a job by the rule of `gprof-dl summary
-- --view distributed` (gprof-dl-summary(1), "The straggler"), one row with
-- the view's facts:
--   straggler_rank (-1: none), straggler_cause (0 computation, 1 data
--   loading, 2 host time outside operators, 3 its own communication; -1
--   none), straggler_excess_ns (of the cause; 0 none), busy_excess_ns,
--   others_median_busy_ns and others_wait_ns (of the rank with the largest
--   excess), and that rank as candidate_rank, all per step.
-- The rule: per rank, busy time per counted step (step - wait, as in
-- step_time.sql): its mean and the standard error of the mean; each rank's
-- excess over the median of the OTHER ranks' means; the largest excess (the
-- lowest rank on a tie) is named when it is more than 3 standard errors of
-- the difference (its own squared standard error plus the median of the
-- others', square-rooted: compared here as squares, so no sqrt is needed)
-- and more than 2% of the others' median, and the others' mean wait per
-- step is at least half the excess. Its cause is the component whose value
-- per step exceeds the others' median the most: computation (as in
-- rank_time.sql), data loading (the union of its Dataloader ranges), host
-- time outside operators (the window - the union of its operators,
-- communication and Dataloader ranges), its own communication
-- (communication - wait).
-- Engines: DuckDB and Spark SQL over `gprof-dl export --csv --partitioned`,
-- sqlite over `gprof-dl export --sqlite` (examples/recipes/run); plain SQL
-- with window functions; medians by row_number and count. Not reproduced:
-- as rank_time.sql says; a job with a rank without counted steps names no
-- straggler (as the view) and gives 0 figures here.
-- params: skip_steps (default 10, as --skip-steps), in views.sql.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
-- per rank: busy per step (mean, squared standard error of the mean), the
-- cause components and its wait, each per step
WITH rank_busy AS (
  SELECT rank, n,
         busy_sum / n AS busy,
         CASE WHEN n > 1 AND (busy_sq - busy_sum * busy_sum / n) / (n - 1) > 0
              THEN (busy_sq - busy_sum * busy_sum / n) / (n - 1) / n ELSE 0 END AS busy_var,
         CAST(comp_ns AS DOUBLE) / n AS c0,
         CAST(dl_ns AS DOUBLE) / n AS c1,
         CAST(CASE WHEN window_ns > active_ns THEN window_ns - active_ns ELSE 0 END AS DOUBLE) / n AS c2,
         CAST(CASE WHEN comm_ns > wait_ns THEN comm_ns - wait_ns ELSE 0 END AS DOUBLE) / n AS c3,
         CAST(wait_ns AS DOUBLE) / n AS wait
  FROM per_rank
),
-- the median of the OTHER ranks' values, without a self-join: with the
-- values in order (position p), the others' median lies at their positions
-- q1 and q2 (the same for an odd count), which are positions q, or q + 1
-- past the rank's own; so the values at q1, q1 + 1 and q1 + 2 are enough
rank_pos AS (
  SELECT b.*, COUNT(*) OVER () AS nr,
         (SUM(wait) OVER () - wait) / (COUNT(*) OVER () - 1) AS others_wait,
         ROW_NUMBER() OVER (ORDER BY busy, rank) AS p_busy,
         ROW_NUMBER() OVER (ORDER BY busy_var, rank) AS p_busy_var,
         ROW_NUMBER() OVER (ORDER BY c0, rank) AS p_c0,
         ROW_NUMBER() OVER (ORDER BY c1, rank) AS p_c1,
         ROW_NUMBER() OVER (ORDER BY c2, rank) AS p_c2,
         ROW_NUMBER() OVER (ORDER BY c3, rank) AS p_c3
  FROM rank_busy b
),
rank_q AS (
  SELECT p.*,
         ((nr - 1) + 1 - ((nr - 1) + 1) % 2) / 2 AS q1,
         ((nr - 1) - (nr - 1) % 2) / 2 + 1 AS q2
  FROM rank_pos p
),
rank_mid AS (
  SELECT q.*,
         MAX(CASE WHEN p_busy = q1 + 0 THEN busy END) OVER () AS busy_0,
         MAX(CASE WHEN p_busy = q1 + 1 THEN busy END) OVER () AS busy_1,
         MAX(CASE WHEN p_busy = q1 + 2 THEN busy END) OVER () AS busy_2,
         MAX(CASE WHEN p_busy_var = q1 + 0 THEN busy_var END) OVER () AS busy_var_0,
         MAX(CASE WHEN p_busy_var = q1 + 1 THEN busy_var END) OVER () AS busy_var_1,
         MAX(CASE WHEN p_busy_var = q1 + 2 THEN busy_var END) OVER () AS busy_var_2,
         MAX(CASE WHEN p_c0 = q1 + 0 THEN c0 END) OVER () AS c0_0,
         MAX(CASE WHEN p_c0 = q1 + 1 THEN c0 END) OVER () AS c0_1,
         MAX(CASE WHEN p_c0 = q1 + 2 THEN c0 END) OVER () AS c0_2,
         MAX(CASE WHEN p_c1 = q1 + 0 THEN c1 END) OVER () AS c1_0,
         MAX(CASE WHEN p_c1 = q1 + 1 THEN c1 END) OVER () AS c1_1,
         MAX(CASE WHEN p_c1 = q1 + 2 THEN c1 END) OVER () AS c1_2,
         MAX(CASE WHEN p_c2 = q1 + 0 THEN c2 END) OVER () AS c2_0,
         MAX(CASE WHEN p_c2 = q1 + 1 THEN c2 END) OVER () AS c2_1,
         MAX(CASE WHEN p_c2 = q1 + 2 THEN c2 END) OVER () AS c2_2,
         MAX(CASE WHEN p_c3 = q1 + 0 THEN c3 END) OVER () AS c3_0,
         MAX(CASE WHEN p_c3 = q1 + 1 THEN c3 END) OVER () AS c3_1,
         MAX(CASE WHEN p_c3 = q1 + 2 THEN c3 END) OVER () AS c3_2
  FROM rank_q q
),
rank_med AS (
  SELECT r.*,
         (CASE (CASE WHEN q1 < p_busy THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN busy_0 WHEN 1 THEN busy_1 ELSE busy_2 END
          + CASE (CASE WHEN q2 < p_busy THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN busy_0 WHEN 1 THEN busy_1 ELSE busy_2 END) / 2 AS m_busy,
         (CASE (CASE WHEN q1 < p_busy_var THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN busy_var_0 WHEN 1 THEN busy_var_1 ELSE busy_var_2 END
          + CASE (CASE WHEN q2 < p_busy_var THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN busy_var_0 WHEN 1 THEN busy_var_1 ELSE busy_var_2 END) / 2 AS m_busy_var,
         (CASE (CASE WHEN q1 < p_c0 THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN c0_0 WHEN 1 THEN c0_1 ELSE c0_2 END
          + CASE (CASE WHEN q2 < p_c0 THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN c0_0 WHEN 1 THEN c0_1 ELSE c0_2 END) / 2 AS m_c0,
         (CASE (CASE WHEN q1 < p_c1 THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN c1_0 WHEN 1 THEN c1_1 ELSE c1_2 END
          + CASE (CASE WHEN q2 < p_c1 THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN c1_0 WHEN 1 THEN c1_1 ELSE c1_2 END) / 2 AS m_c1,
         (CASE (CASE WHEN q1 < p_c2 THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN c2_0 WHEN 1 THEN c2_1 ELSE c2_2 END
          + CASE (CASE WHEN q2 < p_c2 THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN c2_0 WHEN 1 THEN c2_1 ELSE c2_2 END) / 2 AS m_c2,
         (CASE (CASE WHEN q1 < p_c3 THEN q1 ELSE q1 + 1 END) - q1 WHEN 0 THEN c3_0 WHEN 1 THEN c3_1 ELSE c3_2 END
          + CASE (CASE WHEN q2 < p_c3 THEN q2 ELSE q2 + 1 END) - q1 WHEN 0 THEN c3_0 WHEN 1 THEN c3_1 ELSE c3_2 END) / 2 AS m_c3
  FROM rank_mid r
),
cand AS (
  SELECT rank, busy - m_busy AS excess, m_busy, busy_var + m_busy_var AS se2, others_wait,
         c0 - m_c0 AS e0, c1 - m_c1 AS e1, c2 - m_c2 AS e2, c3 - m_c3 AS e3,
         ROW_NUMBER() OVER (ORDER BY busy - m_busy DESC, rank) AS k
  FROM rank_med
),
verdict AS (
  SELECT c.*,
         CASE WHEN excess > 0 AND excess * excess > 9 * se2 AND excess > 0.02 * m_busy
                   AND others_wait >= excess / 2 THEN 1 ELSE 0 END AS named,
         CASE WHEN e0 >= e1 AND e0 >= e2 AND e0 >= e3 THEN 0
              WHEN e1 >= e2 AND e1 >= e3 THEN 1
              WHEN e2 >= e3 THEN 2 ELSE 3 END AS cause
  FROM cand c WHERE k = 1
),
-- a job of fewer than 2 ranks, or with a rank without counted steps: none
job AS (
  SELECT (SELECT COUNT(DISTINCT rank) FROM ranks WHERE rank >= 0) AS nranks,
         (SELECT COUNT(DISTINCT rank) FROM ranks WHERE rank >= 0)
         - (SELECT COUNT(DISTINCT rank) FROM counted WHERE counted = 1) AS without_steps
)
SELECT CASE WHEN ok = 1 AND named = 1 THEN rank ELSE -1 END AS straggler_rank,
       CASE WHEN ok = 1 AND named = 1 THEN cause ELSE -1 END AS straggler_cause,
       CASE WHEN ok = 1 AND named = 1
            THEN CASE cause WHEN 0 THEN e0 WHEN 1 THEN e1 WHEN 2 THEN e2 ELSE e3 END
            ELSE 0 END AS straggler_excess_ns,
       CASE WHEN ok = 1 THEN excess ELSE 0 END AS busy_excess_ns,
       CASE WHEN ok = 1 THEN m_busy ELSE 0 END AS others_median_busy_ns,
       CASE WHEN ok = 1 THEN others_wait ELSE 0 END AS others_wait_ns,
       CASE WHEN ok = 1 THEN rank ELSE -1 END AS candidate_rank
FROM (SELECT v.*, CASE WHEN j.nranks >= 2 AND j.without_steps = 0 THEN 1 ELSE 0 END AS ok
      FROM job j LEFT JOIN verdict v ON 1 = 1) x
