-- store_run_window_last: the window of request starts the last nightly
-- run's report covered (see run_window). No parameters. At most one row:
-- since_ns, until_ns (BIGINT, Unix ns, until exclusive; 0 leaves a side
-- open).
SELECT since_ns, until_ns FROM run_window;
