-- baseline_tables: (re)creates the baseline tables, empty. baseline.Compute
-- fills them; running it again replaces them.
--
-- baselines: one row per retried logical request (attempts > 1) and baseline
--   kind (SPEC §5), also when no baseline could be found for it.
--   request_id      the logical request (requests.request_id)
--   kind            no_retry | healthy | alternate_route | matched | experiment
--   latency_ms      L_retry: the request's client-observed latency
--   l0_ms           L0 under this kind; NULL when there is none (see reason)
--   added_ms        latency_ms - l0_ms
--   ratio           latency_ms / l0_ms
--   provenance      measured | experiment | modeled: how L0 was obtained
--   method          how L0 was computed, in words, with the options used
--   cohort_size     comparison requests L0 was taken from (NULL: no_retry and
--                   the measured alternate_route, which use the request itself)
--   match_distance  matched: mean covariate distance of the matches used
--   reason          why l0_ms is NULL, else NULL
--
-- baseline_arms: the policy-experiment arm of every logical request whose
--   anchor span carries the arm attribute.
--   request_id, arm  the attribute's value, e.g. no_retry or retry
--   control          arm is the control arm (no retries)
CREATE OR REPLACE TABLE baselines (
    request_id     VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,
    latency_ms     DOUBLE NOT NULL,
    l0_ms          DOUBLE,
    added_ms       DOUBLE,
    ratio          DOUBLE,
    provenance     VARCHAR NOT NULL,
    method         VARCHAR NOT NULL,
    cohort_size    INTEGER,
    match_distance DOUBLE,
    reason         VARCHAR
);

CREATE OR REPLACE TABLE baseline_arms (
    request_id VARCHAR NOT NULL,
    arm        VARCHAR NOT NULL,
    control    BOOLEAN NOT NULL
);
