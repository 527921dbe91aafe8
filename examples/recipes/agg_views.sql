-- agg_views.sql - the views of views.sql that read events, as the
-- aggregate tables give them (formats/SQL-SCHEMA.md, "Aggregate tables":
-- what `gprof-dl export` measured of each rank on its own host). With
-- `run --aggregates`, each view here replaces the one of its name in
-- views.sql and every other view of views.sql is used as it is: the
-- matching of the calls across ranks, the waits, busy, the parts and the
-- straggler's rule are written once, there. So step_time.sql, rank_time.sql
-- and straggler.sql give the same rows from the aggregate tables alone (an
-- export with --no-events) as from the events. By hand: views.sql, then
-- this file, then the recipe, in one session.

-- the rank's host (rank_time.sql), backend and world size (collectives.sql),
-- from agg_ranks
CREATE TEMPORARY VIEW ranks AS
  SELECT rank, host, backend AS dist_backend, world_size FROM agg_ranks WHERE rank >= 0;

-- the steps as the analysis counted them; cpu_ns says only whether the
-- run-queue time is known (views.sql reads it so: cpu_ns > 0)
CREATE TEMPORARY VIEW steps AS
  SELECT rank, step, start_ns, start_ns + dur_ns AS end_ns, dur_ns,
         CAST(CASE WHEN runq_ns IS NULL THEN 0 ELSE 1 END AS BIGINT) AS cpu_ns, runq_ns, samples
  FROM agg_steps WHERE rank >= 0;

CREATE TEMPORARY VIEW src AS
  SELECT rank, gpu AS gpu_comp, gpu_comm FROM agg_ranks WHERE rank >= 0;

-- the calls the analysis collected (collective.h), in its order: `call`
-- orders ties of start as the analysis does; at_ns, what places a call in
-- a step, is the start of the step it started in (agg_calls.step)
CREATE TEMPORARY VIEW calls AS
  SELECT c.rank, c.call AS thread, c.start_ns, c.end_ns - c.start_ns AS dur_ns, c.op AS name,
         c.seq AS coll_seq, c.pg AS process_group, c.peer, s.start_ns AS at_ns
  FROM agg_calls c
  LEFT JOIN agg_steps s ON s.rank = c.rank AND s.step = c.step
  WHERE c.rank >= 0;

-- the communication calls of the Collective Summary (views.sql's
-- coll_calls) as the analysis collected them: at_ns, what places a call in
-- a step, is the start of the step it started in (NULL: none); `call`
-- orders ties of start as the analysis does
CREATE TEMPORARY VIEW coll_calls AS
  SELECT c.rank, c.start_ns, c.end_ns - c.start_ns AS dur_ns, s.start_ns AS at_ns,
         c.call AS thread, c.op AS name, c.bytes, c.seq AS coll_seq, COALESCE(c.pg, '') AS pg,
         c.group_size, c.peer
  FROM agg_calls c
  LEFT JOIN agg_steps s ON s.rank = c.rank AND s.step = c.step
  WHERE c.rank >= 0;

-- the sweep over what a wait can take from: the counted steps, W, and the
-- parts' sets inside the calls (agg_call_sets: D, C \ D, M \ (D u C),
-- disjoint)
CREATE TEMPORARY VIEW part_ivl AS
  SELECT rank, s, e, i_step, i_num, i_w, i_d, i_c, i_m FROM step_wait_ivl
  UNION ALL
  SELECT rank, start_ns, end_ns, 0, 0, 0,
         CASE WHEN part = 'data' THEN 1 ELSE 0 END, CASE WHEN part = 'comp' THEN 1 ELSE 0 END,
         CASE WHEN part = 'comm' THEN 1 ELSE 0 END
  FROM agg_call_sets WHERE rank >= 0 AND end_ns > start_ns;

-- per counted step: the wait, and each part of agg_steps less what of it
-- lies in the wait; the unions as measured
CREATE TEMPORARY VIEW step_sets AS
  SELECT a.rank, a.step, COALESCE(w.wait_ns, 0) AS wait_ns,
         a.data_ns - COALESCE(w.data_w, 0) AS data_ns,
         a.comp_ns - COALESCE(w.comp_w, 0) AS comp_ns,
         a.comm_ns - COALESCE(w.comm_w, 0) AS comm_ns,
         a.computation_ns AS comp_all_ns, a.communication_ns AS comm_all_ns,
         a.computation_ns + a.communication_ns - a.overlap_ns AS busy_all_ns
  FROM agg_steps a
  LEFT JOIN (SELECT rank, step,
                    SUM(CASE WHEN n_w > 0 THEN t_next - t ELSE 0 END) AS wait_ns,
                    SUM(CASE WHEN n_w > 0 AND n_d > 0 THEN t_next - t ELSE 0 END) AS data_w,
                    SUM(CASE WHEN n_w > 0 AND n_c > 0 THEN t_next - t ELSE 0 END) AS comp_w,
                    SUM(CASE WHEN n_w > 0 AND n_m > 0 THEN t_next - t ELSE 0 END) AS comm_w
             FROM part_runs
             WHERE n_step = 1 AND t_next > t
             GROUP BY rank, step) w ON w.rank = a.rank AND w.step = a.step
  WHERE a.rank >= 0;

-- the Operator and Kernel views' rows of each rank (agg_operators,
-- agg_kernels), kind 'operator' or 'kernel', by name: each rank's total of
-- the name (views.sql's name_spread gives its spread over the ranks), and
-- the longest call
CREATE TEMPORARY VIEW name_totals AS
  SELECT 'operator' AS kind, rank, name, total_ns, max_ns FROM agg_operators WHERE rank >= 0
  UNION ALL
  SELECT 'kernel' AS kind, rank, name, total_ns, max_ns FROM agg_kernels WHERE rank >= 0;

-- the calls' median and 95th percentile over all ranks, from the summed
-- histograms (agg_durations): the call of rank ceil(q x calls) lies in the
-- first bucket where the calls so far reach it, at most its upper bound
-- (exclusive: hi_ns - 1 in whole ns) and at most the longest call
CREATE TEMPORARY VIEW name_quantiles AS
  SELECT q.kind, q.name,
         CASE WHEN q.p50_ns > m.max_ns THEN m.max_ns ELSE q.p50_ns END AS p50_ns,
         CASE WHEN q.p95_ns > m.max_ns THEN m.max_ns ELSE q.p95_ns END AS p95_ns
  FROM (SELECT kind, name, min(CASE WHEN 2 * upto >= n THEN hi_ns - 1 END) AS p50_ns,
               min(CASE WHEN 20 * upto >= 19 * n THEN hi_ns - 1 END) AS p95_ns
        FROM (SELECT kind, name, hi_ns,
                     sum(calls) OVER (PARTITION BY kind, name ORDER BY lo_ns
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
                     sum(calls) OVER (PARTITION BY kind, name) AS n
              FROM (SELECT kind, name, lo_ns, hi_ns, sum(calls) AS calls
                    FROM agg_durations WHERE rank >= 0
                    GROUP BY kind, name, lo_ns, hi_ns) b) c
        GROUP BY kind, name) q
  LEFT JOIN (SELECT kind, name, max(max_ns) AS max_ns FROM name_totals GROUP BY kind, name) m
    ON m.kind = q.kind AND m.name = q.name;
