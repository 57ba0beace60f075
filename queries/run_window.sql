-- run_window: the window of request starts the nightly job's report
-- covers, remembered for a later run that brings nothing new, so it
-- writes the same report again. $1 since, $2 until (Unix ns, until
-- exclusive; 0 leaves a side open, both 0 cover every request).
DELETE FROM run_window;
INSERT INTO run_window VALUES ($1, $2);
