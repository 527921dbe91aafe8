-- straggler.sql - the straggler of a job by the rule of `gprof-dl summary
-- --view distributed` (gprof-dl-summary(1), "The straggler"; the code:
-- lib/analysis/dist/verdict.h), one row with the view's facts:
--   straggler_rank (-1: none), straggler_cause (0 computation, 1 data
--   loading, 2 host time outside operators, 3 its own communication, 4 CPU
--   contention; -1 none), straggler_kind (1 consistent, 2 intermittent; 0
--   none), straggler_steps_held, straggler_excess_ns (of the cause; 0
--   none); of the candidate (the rank of the largest cost; -1 and 0 when
--   there is none): candidate_rank, straggler_p, busy_excess_ns and its
--   parts part_computation_ns, part_data_loading_ns, part_host_ns,
--   part_communication_ns, part_contention_ns (they add up to it),
--   others_median_busy_ns, others_wait_ns, cost_ns, cost_pct; and
--   job_step_ns, noise_ns (theta), steps_compared. Times per step.
-- The rule, step by step: the compared steps are the step numbers every
-- rank counted (step g of every rank is one paired observation); per step g
-- and rank r, on busy time b (step - wait, as in step_time.sql):
--   e(r,g) = b(r,g) - the median of the others' b in g (with its parts:
--            the middle other rank's, or the mean of the two middle ones)
--   s(r,g) = b(r,g) - the largest of the others' b in g, when positive
--   sigma  = 1.4826 x the median over ranks and steps of |e - the rank's
--            median e|; theta = max(5 % of the median b, 4 sigma)
--   cost   = the mean of s over the steps; the candidate: the largest
--            (the lowest rank on a tie)
--   the tests over the candidate's steps, each p times the ranks
--            (Bonferroni), at most 1: the sign test, e > 0 against e < 0,
--            P(X >= s), X ~ Bin(m, 1/2); the sign-flip test (Fisher-
--            Pitman) over the steps whose |e| exceeds theta, exact over
--            the 16 largest |e| (the earlier step first on a tie): the
--            share of the 2^m patterns of signs whose sum of +-|e| is at
--            least the sum of e
--   kind   = intermittent when e exceeds theta in more than one and fewer
--            than half of the steps, those hold most of its savings (the
--            largest one aside) and its median e is less than half of
--            theirs: named only by the sign-flip test; else consistent
--            when a test gives p < 0.05 and the median of its e exceeds
--            the floor max(2 sigma, 5 % of the median b), or it is busier
--            in 90 % of the tested steps by a median e over half the
--            median b however loud the noise; else
--            intermittent when the sign-flip test does; it is named when
--            its cost is at least 5 % of the job's mean step (the last
--            rank's end of each step less that of the one before); its p:
--            the sign-flip test's when intermittent, else the smaller
--   its figures over its used steps: intermittent, those with e > theta;
--            else all but those whose |e - its median e| exceeds
--            max(5 x 1.4826 x the median of those, theta); held steps:
--            s beyond theta (consistent: beyond the floor); others' wait:
--            their mean wait there
--   paced:   busy less its communication beyond the step's least over the
--            ranks (a collective's transfer goes at its slowest rank's pace:
--            the rest is waiting); the rule and the cost run on it
--   CPU contention first: the rule runs on b = paced - contention, leaving
--            out of the tests the steps where some rank's contention, up
--            to half of that rank's own work (b), is as
--            large as |e| (and not 0), or 1.5 x the largest whole run-queue
--            time of the other ranks in the step (runq_all, in their waits
--            too) is, and a rank it names is slow by the
--            largest part of its own work; when it names nobody, it runs
--            on paced and names a rank only when its largest part is
--            contention; the cost is always over paced time
--   the straggler when the others' wait is at least half its excess.
-- The binomial tail: log C(m, i) as a running SUM of LN(m - j + 1) - LN(j)
-- over j = 1 .. i (the integers are the steps table's step numbers + 1:
-- no generator function), each term EXP(log C(m, i) - m LN(2)), summed
-- from i = s; the same SQL on the three engines.
-- The pass (1: busy less contention, 2: busy) is a column: each step's
-- figures are computed once for both, in one chain of window functions
-- (the ranks' positions in each step give the others' median without a
-- self-join).
-- Engines: DuckDB and Spark SQL over `gprof-dl export --csv --partitioned`,
-- sqlite over `gprof-dl export --sqlite` (examples/recipes/run); plain SQL
-- with window functions; medians by row_number and count. Not reproduced:
-- as rank_time.sql says; a job with a rank without counted steps names no
-- straggler (as the view) and gives 0 figures here.
-- params: skip_steps (default 10, as --skip-steps), in views.sql.
-- Needs views.sql (the shared views, and params) run first in the same session:
-- examples/recipes/run does; by hand, run views.sql, then this file.
WITH job AS (
  SELECT COUNT(DISTINCT rank) AS nranks FROM ranks WHERE rank >= 0
),
-- the compared steps: from the latest first counted step (g0) to the
-- earliest last one (g1); nr: the ranks with counted steps
sp AS (
  SELECT p.rank, p.step, p.start_ns, p.dur_ns, p.wait_ns, p.busy_ns, p.comp_part, p.data_part,
         p.host_part, p.comm_part, p.contention_part, p.runq_all,
         MIN(p.comm_part) OVER (PARTITION BY p.step) AS least_comm,
         MAX(skipped) OVER () AS g0,
         MIN(nsteps - 1) OVER () AS g1,
         SUM(CASE WHEN step = skipped THEN 1 ELSE 0 END) OVER () AS nr
  FROM step_parts p
  WHERE counted = 1
),
-- each compared step twice: pass 1 on b = paced less contention, pass 2 on
-- b = paced; each rank's place in its step by b (p: the rule), by busy
-- (pb: the figures), by paced (pp: the cost) and by whole run-queue time,
-- largest first (pr: the others' largest). Of the nr - 1 others of a rank, the middle ones are
-- the (nr - 2) / 2-th and (nr - 1) / 2-th (from 0): at places q1 or q1 + 1
-- and q2 or q2 + 1 (from 1, the rank's own among them)
obs AS (
  SELECT c.rank, c.step - c.g0 AS g, c.g1 - c.g0 + 1 AS k, c.nr, x.pass,
         ((c.nr - 2) - (c.nr - 2) % 2) / 2 + 1 AS q1, ((c.nr - 1) - (c.nr - 1) % 2) / 2 + 1 AS q2,
         c.wait_ns, CAST(c.busy_ns AS DOUBLE) AS busy,
         CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm) AS pc,
         CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm)
           - CASE WHEN x.pass = 1 THEN c.contention_part ELSE 0 END AS b,
         c.runq_all AS rq,
         c.comp_part AS p_comp, c.data_part AS p_data, c.host_part AS p_host,
         c.comm_part AS p_comm, c.contention_part AS p_cont,
         ROW_NUMBER() OVER (PARTITION BY x.pass, c.step
                            ORDER BY CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm)
                                     - CASE WHEN x.pass = 1 THEN c.contention_part ELSE 0 END,
                                     c.rank) AS p,
         ROW_NUMBER() OVER (PARTITION BY x.pass, c.step ORDER BY c.busy_ns, c.rank) AS pb,
         ROW_NUMBER() OVER (PARTITION BY x.pass, c.step
                            ORDER BY CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm),
                                     c.rank) AS pp,
         ROW_NUMBER() OVER (PARTITION BY x.pass, c.step ORDER BY c.runq_all DESC, c.rank) AS pr,
         MIN(c.start_ns) OVER (PARTITION BY x.pass, c.step) AS g_start,
         MAX(c.start_ns + c.dur_ns) OVER (PARTITION BY x.pass, c.step) AS g_end,
         SUM(c.wait_ns) OVER (PARTITION BY x.pass, c.step) AS g_wait,
         MAX(CASE WHEN c.contention_part
                       <= 0.5E0 * (CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm)
                                   - c.contention_part)
                  THEN c.contention_part
                  WHEN CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm) - c.contention_part > 0
                  THEN 0.5E0 * (CAST(c.busy_ns AS DOUBLE) - (c.comm_part - c.least_comm)
                                - c.contention_part)
                  ELSE 0 END) OVER (PARTITION BY x.pass, c.step) AS g_cont
  FROM sp c CROSS JOIN (SELECT 1 AS pass UNION ALL SELECT 2 AS pass) x
  WHERE c.step >= c.g0 AND c.step <= c.g1
),
-- the values at those places, and the largest two
o1 AS (
  SELECT rank, g, k, nr, pass, p, pb, pp, pr, q1, q2, wait_ns, busy, pc, b, rq, p_comp, p_data,
         p_host, p_comm, p_cont, g_start, g_end, g_wait, g_cont,
         MAX(CASE WHEN pp = nr - 1 THEN pc END) OVER (PARTITION BY pass, g) AS v_n1,
         MAX(CASE WHEN pp = nr THEN pc END) OVER (PARTITION BY pass, g) AS v_n,
         MAX(CASE WHEN pr = 1 THEN rq END) OVER (PARTITION BY pass, g) AS rq_1,
         MAX(CASE WHEN pr = 2 THEN rq END) OVER (PARTITION BY pass, g) AS rq_2,
         MAX(CASE WHEN p = q1 THEN b END) OVER (PARTITION BY pass, g) AS b_q1,
         MAX(CASE WHEN p = q1 + 1 THEN b END) OVER (PARTITION BY pass, g) AS b_q1n,
         MAX(CASE WHEN p = q2 THEN b END) OVER (PARTITION BY pass, g) AS b_q2,
         MAX(CASE WHEN p = q2 + 1 THEN b END) OVER (PARTITION BY pass, g) AS b_q2n,
         MAX(CASE WHEN p = nr - 1 THEN b END) OVER (PARTITION BY pass, g) AS b_n1,
         MAX(CASE WHEN p = nr THEN b END) OVER (PARTITION BY pass, g) AS b_n,
         MAX(CASE WHEN pb = q1 THEN busy END) OVER (PARTITION BY pass, g) AS u_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN busy END) OVER (PARTITION BY pass, g) AS u_q1n,
         MAX(CASE WHEN pb = q2 THEN busy END) OVER (PARTITION BY pass, g) AS u_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN busy END) OVER (PARTITION BY pass, g) AS u_q2n,
         MAX(CASE WHEN pb = nr - 1 THEN busy END) OVER (PARTITION BY pass, g) AS u_n1,
         MAX(CASE WHEN pb = nr THEN busy END) OVER (PARTITION BY pass, g) AS u_n,
         MAX(CASE WHEN pb = q1 THEN p_comp END) OVER (PARTITION BY pass, g) AS c_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN p_comp END) OVER (PARTITION BY pass, g) AS c_q1n,
         MAX(CASE WHEN pb = q2 THEN p_comp END) OVER (PARTITION BY pass, g) AS c_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN p_comp END) OVER (PARTITION BY pass, g) AS c_q2n,
         MAX(CASE WHEN pb = q1 THEN p_data END) OVER (PARTITION BY pass, g) AS d_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN p_data END) OVER (PARTITION BY pass, g) AS d_q1n,
         MAX(CASE WHEN pb = q2 THEN p_data END) OVER (PARTITION BY pass, g) AS d_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN p_data END) OVER (PARTITION BY pass, g) AS d_q2n,
         MAX(CASE WHEN pb = q1 THEN p_host END) OVER (PARTITION BY pass, g) AS h_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN p_host END) OVER (PARTITION BY pass, g) AS h_q1n,
         MAX(CASE WHEN pb = q2 THEN p_host END) OVER (PARTITION BY pass, g) AS h_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN p_host END) OVER (PARTITION BY pass, g) AS h_q2n,
         MAX(CASE WHEN pb = q1 THEN p_comm END) OVER (PARTITION BY pass, g) AS m_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN p_comm END) OVER (PARTITION BY pass, g) AS m_q1n,
         MAX(CASE WHEN pb = q2 THEN p_comm END) OVER (PARTITION BY pass, g) AS m_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN p_comm END) OVER (PARTITION BY pass, g) AS m_q2n,
         MAX(CASE WHEN pb = q1 THEN p_cont END) OVER (PARTITION BY pass, g) AS n_q1,
         MAX(CASE WHEN pb = q1 + 1 THEN p_cont END) OVER (PARTITION BY pass, g) AS n_q1n,
         MAX(CASE WHEN pb = q2 THEN p_cont END) OVER (PARTITION BY pass, g) AS n_q2,
         MAX(CASE WHEN pb = q2 + 1 THEN p_cont END) OVER (PARTITION BY pass, g) AS n_q2n,
         LAG(g_end) OVER (PARTITION BY pass, rank ORDER BY g) AS prev_end
  FROM obs o
),
-- e, s (on b; on busy for the cost), the others' middle by busy and the
-- excess of each part over theirs, the others' wait (their mean: / (nr - 1)
-- at the end, so that the sums are of whole ns), the job's time for the
-- step (the last rank's end less that of the step before)
o2 AS (
  SELECT rank, g, k, nr, pass, p, busy, b,
         b - ((CASE WHEN q1 < p THEN b_q1 ELSE b_q1n END)
              + (CASE WHEN q2 < p THEN b_q2 ELSE b_q2n END)) / 2 AS e,
         CASE WHEN p < nr AND b > b_n THEN b - b_n WHEN p = nr AND b > b_n1 THEN b - b_n1 ELSE 0 END AS sav,
         CASE WHEN pp < nr AND pc > v_n THEN pc - v_n
              WHEN pp = nr AND pc > v_n1 THEN pc - v_n1 ELSE 0 END AS sav_busy,
         ((CASE WHEN q1 < pb THEN u_q1 ELSE u_q1n END)
          + (CASE WHEN q2 < pb THEN u_q2 ELSE u_q2n END)) / 2 AS mid_busy,
         p_comp - ((CASE WHEN q1 < pb THEN c_q1 ELSE c_q1n END)
                   + (CASE WHEN q2 < pb THEN c_q2 ELSE c_q2n END)) / 2 AS x_comp,
         p_data - ((CASE WHEN q1 < pb THEN d_q1 ELSE d_q1n END)
                   + (CASE WHEN q2 < pb THEN d_q2 ELSE d_q2n END)) / 2 AS x_data,
         p_host - ((CASE WHEN q1 < pb THEN h_q1 ELSE h_q1n END)
                   + (CASE WHEN q2 < pb THEN h_q2 ELSE h_q2n END)) / 2 AS x_host,
         p_comm - ((CASE WHEN q1 < pb THEN m_q1 ELSE m_q1n END)
                   + (CASE WHEN q2 < pb THEN m_q2 ELSE m_q2n END)) / 2 AS x_comm,
         p_cont - ((CASE WHEN q1 < pb THEN n_q1 ELSE n_q1n END)
                   + (CASE WHEN q2 < pb THEN n_q2 ELSE n_q2n END)) / 2 AS x_cont,
         g_wait - wait_ns AS others_wait,
         CASE WHEN prev_end IS NULL THEN g_end - g_start
              WHEN g_end > prev_end THEN g_end - prev_end ELSE 0 END AS job_step,
         CASE WHEN pass = 1 AND g_cont > 0
                   AND 1.0E0 * g_cont >= ABS(b - ((CASE WHEN q1 < p THEN b_q1 ELSE b_q1n END)
                                                  + (CASE WHEN q2 < p THEN b_q2 ELSE b_q2n END)) / 2)
              THEN 0
              WHEN pass = 1 AND COALESCE(CASE WHEN pr = 1 THEN rq_2 ELSE rq_1 END, 0) > 0
                   AND 1.5E0 * COALESCE(CASE WHEN pr = 1 THEN rq_2 ELSE rq_1 END, 0)
                       >= ABS(b - ((CASE WHEN q1 < p THEN b_q1 ELSE b_q1n END)
                                   + (CASE WHEN q2 < p THEN b_q2 ELSE b_q2n END)) / 2)
              THEN 0 ELSE 1 END AS kept
  FROM o1 o
),
-- the places for the medians (kept 0: a step the tests leave out: pass 1,
-- some rank's contention in it as large as |e|); the cost; the job's mean
-- step
o3 AS (
  SELECT o.*,
         ROW_NUMBER() OVER (PARTITION BY pass, rank ORDER BY e) AS ke,
         ROW_NUMBER() OVER (PARTITION BY pass ORDER BY b) AS kb,
         SUM(sav) OVER (PARTITION BY pass, rank) / k AS cost,
         SUM(sav_busy) OVER (PARTITION BY pass, rank) / k AS cost_busy,
         CAST(SUM(CASE WHEN p = 1 THEN job_step ELSE 0 END) OVER (PARTITION BY pass) AS DOUBLE) / k
           AS job_mean
  FROM o2 o
),
-- each rank's median e (its typical excess), the median b
o4 AS (
  SELECT o.*,
         AVG(CASE WHEN 2 * ke IN (k, k + 1, k + 2) THEN e END) OVER (PARTITION BY pass, rank) AS med_e,
         AVG(CASE WHEN 2 * kb IN (nr * k, nr * k + 1, nr * k + 2) THEN b END)
           OVER (PARTITION BY pass) AS med_b
  FROM o3 o
),
o5 AS (
  SELECT o.*, ABS(e - med_e) AS dev,
         ROW_NUMBER() OVER (PARTITION BY pass ORDER BY ABS(e - med_e)) AS kd,
         ROW_NUMBER() OVER (PARTITION BY pass, rank ORDER BY ABS(e - med_e)) AS kdr
  FROM o4 o
),
-- sigma = 1.4826 x the median dev; theta = max(5 % of the median b,
-- 4 sigma); consistent needs the typical e beyond max(2 sigma, 5 % of the
-- median b); the outliers' fence: max(5 x 1.4826 x the rank's median dev,
-- theta)
o6 AS (
  SELECT o.*,
         1.4826E0 * AVG(CASE WHEN 2 * kd IN (nr * k, nr * k + 1, nr * k + 2) THEN dev END)
           OVER (PARTITION BY pass) AS sigma,
         (5.0E0 * 1.4826E0) * AVG(CASE WHEN 2 * kdr IN (k, k + 1, k + 2) THEN dev END)
           OVER (PARTITION BY pass, rank) AS fence0
  FROM o5 o
),
-- theta = max(5 % of the median b, 4 sigma); the floor a consistent
-- straggler's typical e must exceed: max(2 sigma, 5 % of the median b)
o7 AS (
  SELECT o.*,
         CASE WHEN 0.05E0 * med_b > 4.0E0 * sigma THEN 0.05E0 * med_b ELSE 4.0E0 * sigma END AS theta,
         CASE WHEN 2.0E0 * sigma > 0.05E0 * med_b THEN 2.0E0 * sigma ELSE 0.05E0 * med_b END AS floor_e
  FROM o6 o
),
-- the candidate of each pass: the rank of the largest cost (the lowest on
-- a tie); the steps of the tests: those kept whose |e| exceeds theta (big;
-- bi: their order by |e|, largest first, the earlier step first on a tie)
-- and those whose e does (held; kh: their order by e)
o8 AS (
  SELECT o.*,
         MAX(cost) OVER (PARTITION BY pass) AS max_cost,
         CASE WHEN kept = 1 AND ABS(e) > theta THEN 1 ELSE 0 END AS big,
         CASE WHEN kept = 1 AND e > theta THEN 1 ELSE 0 END AS held,
         ROW_NUMBER() OVER (PARTITION BY pass, rank,
                                         CASE WHEN kept = 1 AND ABS(e) > theta THEN 1 ELSE 0 END
                            ORDER BY ABS(e) DESC, g) - 1 AS bi,
         ROW_NUMBER() OVER (PARTITION BY pass, rank,
                                         CASE WHEN kept = 1 AND e > theta THEN 1 ELSE 0 END
                            ORDER BY e) AS kh
  FROM o7 o
),
-- for the sign-flip test, the 16 largest big ones (all when there are no
-- more): m of them, t their sum; nh: the held ones
o9 AS (
  SELECT o.*,
         MIN(CASE WHEN cost = max_cost THEN rank END) OVER (PARTITION BY pass) AS cand_rank,
         SUM(CASE WHEN big = 1 AND bi < 16 THEN 1 ELSE 0 END) OVER (PARTITION BY pass, rank) AS m,
         SUM(CASE WHEN big = 1 AND bi < 16 THEN e ELSE 0 END) OVER (PARTITION BY pass, rank) AS t,
         SUM(held) OVER (PARTITION BY pass, rank) AS nh
  FROM o8 o
),
-- per pass and rank: the counts of the sign test, the shape of its
-- savings (all, beyond theta, the largest), the median e of its held
-- steps, the steps it held back, and the figures over either kind's used
-- steps (i_: e > theta; c_: those not outliers)
per AS (
  SELECT pass, rank, MAX(cand_rank) AS cand_rank, MAX(k) AS k, MAX(nr) AS nr, MAX(cost) AS cost,
         MAX(cost_busy) AS cost_busy,
         MAX(job_mean) AS job_mean, MAX(theta) AS theta, MAX(floor_e) AS floor_e,
         MAX(med_b) AS med_b, SUM(kept) AS seen,
         MAX(med_e) AS typical,
         COALESCE(AVG(CASE WHEN held = 1 AND 2 * kh IN (nh, nh + 1, nh + 2) THEN e END), 0)
           AS held_typical,
         SUM(CASE WHEN kept = 1 AND e > 0 THEN 1 ELSE 0 END) AS pos_n,
         SUM(CASE WHEN kept = 1 AND e < 0 THEN 1 ELSE 0 END) AS neg_n,
         SUM(CASE WHEN e > theta THEN 1 ELSE 0 END) AS beyond,
         SUM(sav) AS s_all,
         SUM(CASE WHEN e > theta THEN sav ELSE 0 END) AS s_big,
         MAX(sav) AS s_max,
         SUM(CASE WHEN sav > theta THEN 1 ELSE 0 END) AS held_theta,
         SUM(CASE WHEN sav > floor_e THEN 1 ELSE 0 END) AS held_floor,
         SUM(CASE WHEN e > theta THEN 1 ELSE 0 END) AS i_used,
         SUM(CASE WHEN e > theta THEN busy ELSE 0 END) AS i_busy,
         SUM(CASE WHEN e > theta THEN mid_busy ELSE 0 END) AS i_mid,
         SUM(CASE WHEN e > theta THEN x_comp ELSE 0 END) AS i_comp,
         SUM(CASE WHEN e > theta THEN x_data ELSE 0 END) AS i_data,
         SUM(CASE WHEN e > theta THEN x_host ELSE 0 END) AS i_host,
         SUM(CASE WHEN e > theta THEN x_comm ELSE 0 END) AS i_comm,
         SUM(CASE WHEN e > theta THEN x_cont ELSE 0 END) AS i_cont,
         SUM(CASE WHEN e > theta THEN others_wait ELSE 0 END) AS i_wait,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN 1 ELSE 0 END) AS c_used,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN busy ELSE 0 END) AS c_busy,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN mid_busy ELSE 0 END) AS c_mid,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN x_comp ELSE 0 END) AS c_comp,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN x_data ELSE 0 END) AS c_data,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN x_host ELSE 0 END) AS c_host,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN x_comm ELSE 0 END) AS c_comm,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN x_cont ELSE 0 END) AS c_cont,
         SUM(CASE WHEN dev <= fence0 OR dev <= theta THEN others_wait ELSE 0 END) AS c_wait
  FROM o9
  GROUP BY pass, rank
),
-- the sign-flip test (Fisher-Pitman) of the candidate, exact over its 16
-- largest: of the 2^m patterns of signs s_i, the share whose sum of
-- s_i |x_i| is at least t (to within 1e-9 (|t| + 1)). By bytes of the
-- pattern: each byte of 8 values (bi / 8) and its 256 patterns v give a
-- partial sum; every pattern is a pair of its two bytes' (the second none
-- up to 8 values)
digits AS (
  SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
  UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9
  UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13
  UNION ALL SELECT 14 UNION ALL SELECT 15
),
byte_sums AS (
  SELECT b.pass, b.bi >> 3 AS p, h.d * 16 + l.d AS v, MAX(b.m) AS m, MAX(b.t) AS t,
         SUM(CASE WHEN ((h.d * 16 + l.d) >> (b.bi & 7)) & 1 = 1 THEN ABS(b.e) ELSE -ABS(b.e) END)
           AS s
  FROM o9 b CROSS JOIN digits h CROSS JOIN digits l
  WHERE b.rank = b.cand_rank AND b.big = 1 AND b.bi < 16
    AND h.d * 16 + l.d < 1 << CASE WHEN b.m - (b.bi >> 3) * 8 < 8 THEN b.m - (b.bi >> 3) * 8
                                   ELSE 8 END
  GROUP BY b.pass, b.bi >> 3, h.d * 16 + l.d
),
flip_exact AS (
  SELECT lo.pass, MAX(lo.m) AS m,
         SUM(CASE WHEN lo.s + COALESCE(hi.s, 0) >= lo.t - 1E-9 * (ABS(lo.t) + 1) THEN 1 ELSE 0 END)
           AS ge
  FROM byte_sums lo
  LEFT JOIN byte_sums hi ON hi.pass = lo.pass AND hi.p = 1
  WHERE lo.p = 0
  GROUP BY lo.pass
),
-- the sign test of the candidate, pos_n of m1: log C(m1, j) = the sum over
-- i = 1 .. j of ln(m1 - i + 1) - ln(i), for j from 1 to m1 (the steps
-- table's step numbers + 1 hold them all); P(X >= pos_n), X ~ Bin(m1,
-- 1/2), the terms from pos_n on
terms AS (
  SELECT c.*, i.j,
         SUM(LN(c.pos_n + c.neg_n - i.j + 1) - LN(i.j))
           OVER (PARTITION BY c.pass ORDER BY i.j ROWS UNBOUNDED PRECEDING) AS lc
  FROM per c
  LEFT JOIN (SELECT DISTINCT step + 1 AS j FROM steps) i ON i.j <= c.pos_n + c.neg_n
  WHERE c.rank = c.cand_rank
),
binom AS (
  SELECT t.*,
         CASE WHEN pos_n = 0 THEN 1E0
              ELSE SUM(CASE WHEN j >= pos_n THEN EXP(lc - (pos_n + neg_n) * LN(2)) ELSE 0 END)
                     OVER (PARTITION BY pass) END AS sf_sign,
         ROW_NUMBER() OVER (PARTITION BY pass ORDER BY j) AS jr
  FROM terms t
),
-- each test's p corrected for the ranks (at most 1) (1 without values);
-- intermittent: beyond theta in more than one and fewer than half its
-- steps that hold most of its savings (the largest aside) and its typical
-- e less than half of theirs, named only by the sign-flip test; else
-- consistent: a test and a typical e beyond the floor, or busier in 90 %
-- of the kept steps by a typical e over half the median b (plain); else
-- intermittent when the sign-flip test says so
rule AS (
  SELECT c.*,
         CASE WHEN nr * sf_sign < 1 THEN nr * sf_sign ELSE 1E0 END AS p_sign,
         CASE WHEN f.m IS NULL THEN 1E0
              WHEN nr * CAST(f.ge AS DOUBLE) / POWER(2E0, f.m) < 1
                THEN nr * CAST(f.ge AS DOUBLE) / POWER(2E0, f.m)
              ELSE 1E0 END AS p_big,
         CASE WHEN beyond * 2 < k AND beyond > 1 AND (s_big - s_max) * 2 > s_all - s_max
                   AND typical < 0.5E0 * held_typical THEN 1 ELSE 0 END AS sporadic
  FROM binom c
  LEFT JOIN flip_exact f ON f.pass = c.pass
  WHERE c.jr = 1
),
kinds AS (
  SELECT r.*,
         CASE WHEN sporadic = 1 THEN CASE WHEN p_big < 0.05E0 THEN 2 ELSE 0 END
              WHEN (p_sign < 0.05E0 OR p_big < 0.05E0)
                   AND (typical > floor_e
                        OR (seen > 0 AND pos_n >= 0.9E0 * seen AND typical > 0.5E0 * med_b))
                THEN 1
              WHEN p_big < 0.05E0 THEN 2 ELSE 0 END AS kind
  FROM rule r
),
-- its p and figures over the used steps of its kind; the steps it held the
-- job back in: s beyond theta (consistent: beyond the floor)
fig AS (
  SELECT rank, pass, k, nr, theta, job_mean, cost_busy, kind,
         CASE WHEN kind = 1 THEN held_floor ELSE held_theta END AS nheld,
         CASE WHEN kind > 0 AND cost > 0 AND cost >= 0.05E0 * job_mean THEN 1 ELSE 0 END AS named,
         CASE WHEN kind = 2 THEN p_big WHEN p_sign < p_big THEN p_sign ELSE p_big END AS p_value,
         CASE WHEN kind = 2 THEN i_busy ELSE c_busy END / u AS busy,
         CASE WHEN kind = 2 THEN i_mid ELSE c_mid END / u AS mid,
         CAST(CASE WHEN kind = 2 THEN i_wait ELSE c_wait END AS DOUBLE) / u / NULLIF(nr - 1, 0)
           AS others_wait,
         CASE WHEN kind = 2 THEN i_comp ELSE c_comp END / u AS x_comp,
         CASE WHEN kind = 2 THEN i_data ELSE c_data END / u AS x_data,
         CASE WHEN kind = 2 THEN i_host ELSE c_host END / u AS x_host,
         CASE WHEN kind = 2 THEN i_comm ELSE c_comm END / u AS x_comm,
         CASE WHEN kind = 2 THEN i_cont ELSE c_cont END / u AS x_cont
  FROM (SELECT k.*,
               CAST(CASE WHEN kind = 2 THEN CASE WHEN i_used > 0 THEN i_used ELSE 1 END
                         ELSE CASE WHEN c_used > 0 THEN c_used ELSE 1 END END AS DOUBLE) AS u
        FROM kinds k) x
),
-- the excess (its parts add up to it) and the cause: the largest part
-- (contention only in pass 2); pass 1 when it names a rank, else pass 2
-- when it names one for its contention, else pass 1 (nobody)
chosen AS (
  SELECT f.*,
         x_comp + x_data + x_host + x_comm + x_cont AS excess,
         CASE WHEN x_comp >= x_data AND x_comp >= x_host AND x_comp >= x_comm
                   AND (pass = 1 OR x_comp >= x_cont) THEN 0
              WHEN x_data >= x_host AND x_data >= x_comm AND (pass = 1 OR x_data >= x_cont) THEN 1
              WHEN x_host >= x_comm AND (pass = 1 OR x_host >= x_cont) THEN 2
              WHEN pass = 1 OR x_comm >= x_cont THEN 3 ELSE 4 END AS cause,
         MAX(CASE WHEN pass = 1 THEN named END) OVER () AS named1,
         MAX(CASE WHEN pass = 2 AND named = 1 AND x_cont > x_comp AND x_cont > x_data
                       AND x_cont > x_host AND x_cont > x_comm THEN 1 ELSE 0 END) OVER () AS named2
  FROM fig f
),
verdict AS (
  SELECT c.*,
         CASE WHEN named1 = 0 AND named2 = 0 THEN 0
              WHEN others_wait < excess / 2 THEN 0 ELSE 1 END AS is_straggler
  FROM chosen c
  WHERE (pass = 1 AND (named1 = 1 OR named2 = 0)) OR (pass = 2 AND named1 = 0 AND named2 = 1)
)
SELECT CASE WHEN ok = 1 AND is_straggler = 1 THEN rank ELSE -1 END AS straggler_rank,
       CASE WHEN ok = 1 AND is_straggler = 1 THEN cause ELSE -1 END AS straggler_cause,
       CASE WHEN ok = 1 AND is_straggler = 1 THEN kind ELSE 0 END AS straggler_kind,
       CASE WHEN ok = 1 AND is_straggler = 1 THEN nheld ELSE 0 END AS straggler_steps_held,
       CASE WHEN ok = 1 AND is_straggler = 1
            THEN CASE cause WHEN 0 THEN x_comp WHEN 1 THEN x_data WHEN 2 THEN x_host
                            WHEN 3 THEN x_comm ELSE x_cont END
            ELSE 0 END AS straggler_excess_ns,
       CASE WHEN ok = 1 THEN rank ELSE -1 END AS candidate_rank,
       CASE WHEN ok = 1 THEN p_value ELSE 1E0 END AS straggler_p,
       CASE WHEN ok = 1 THEN excess ELSE 0 END AS busy_excess_ns,
       CASE WHEN ok = 1 THEN x_comp ELSE 0 END AS part_computation_ns,
       CASE WHEN ok = 1 THEN x_data ELSE 0 END AS part_data_loading_ns,
       CASE WHEN ok = 1 THEN x_host ELSE 0 END AS part_host_ns,
       CASE WHEN ok = 1 THEN x_comm ELSE 0 END AS part_communication_ns,
       CASE WHEN ok = 1 THEN x_cont ELSE 0 END AS part_contention_ns,
       CASE WHEN ok = 1 THEN mid ELSE 0 END AS others_median_busy_ns,
       CASE WHEN ok = 1 THEN others_wait ELSE 0 END AS others_wait_ns,
       CASE WHEN ok = 1 THEN cost_busy ELSE 0 END AS cost_ns,
       CASE WHEN ok = 1 AND job_mean > 0 THEN 100 * cost_busy / job_mean ELSE 0E0 END AS cost_pct,
       CASE WHEN ok = 1 THEN job_mean ELSE 0 END AS job_step_ns,
       CASE WHEN ok = 1 THEN theta ELSE 0 END AS noise_ns,
       CASE WHEN nranks = nr THEN COALESCE(k, 0) ELSE 0 END AS steps_compared
FROM (SELECT v.*, j.nranks,
             CASE WHEN j.nranks >= 2 AND v.nr = j.nranks AND v.k >= 3 THEN 1 ELSE 0 END AS ok
      FROM job j LEFT JOIN verdict v ON 1 = 1) x
