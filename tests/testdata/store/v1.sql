-- A store as written by stagegate's schema version 1.
--
-- This fixture stands for every store written by schema version 1 in the field. It must NEVER be
-- regenerated from the current code, nor edited to follow later migrations: its point is to prove
-- that today's build still opens and migrates what version 1 wrote. When the schema moves on, add
-- a new fixture for the new version and keep this one as it is.
--
-- The DDL below is migration 1 of src/store/schema.cc, copied verbatim (indentation included, so
-- that sqlite_master holds the same text that migration wrote). The rows that follow are one
-- complete run with one phase and two requests: one answered, one timed out.

      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        scenario_name TEXT NOT NULL,
        scenario_file TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        corpus_version TEXT NOT NULL DEFAULT '',
        scenario_json TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'resumed', 'failed')),
        started_unix_ms INTEGER NOT NULL,
        finished_unix_ms INTEGER
      );
      CREATE TABLE phases (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        stage TEXT NOT NULL,
        phase TEXT NOT NULL,
        level REAL,
        config_json TEXT NOT NULL DEFAULT '{}',
        started_ns INTEGER,
        ended_ns INTEGER,
        status TEXT NOT NULL DEFAULT 'pending',
        UNIQUE (run_id, ordinal)
      );
      CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase_id INTEGER NOT NULL REFERENCES phases(id) ON DELETE CASCADE,
        sequence INTEGER NOT NULL,
        task_id TEXT NOT NULL DEFAULT '',
        persona TEXT NOT NULL DEFAULT '',
        intended_ns INTEGER NOT NULL,
        sent_ns INTEGER,
        first_byte_ns INTEGER,
        first_token_ns INTEGER,
        first_answer_ns INTEGER,
        end_ns INTEGER,
        outcome TEXT NOT NULL,
        http_status INTEGER,
        curl_code INTEGER,
        error_message TEXT NOT NULL DEFAULT '',
        retry_after_s REAL,
        input_tokens INTEGER,
        output_tokens INTEGER,
        token_source TEXT NOT NULL DEFAULT '',
        finish_reason TEXT NOT NULL DEFAULT '',
        answer_text TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX requests_by_phase ON requests(phase_id, sequence);

INSERT INTO runs (id, scenario_name, scenario_file, fingerprint, corpus_version, scenario_json,
                  status, started_unix_ms, finished_unix_ms)
VALUES ('run-v1', 'support-chat', 'scenarios/support-chat.yaml',
        'sha256:3f6c1a9e0b2d4c8e7a5f1b3d9c0e2a4f6b8d0c2e4a6f8b0d2c4e6a8f0b2d4c6e', 'corpus-2024.06',
        '{"name":"support-chat","stages":[{"name":"steady","phases":[{"name":"rate-2","rate":2}]}]}',
        'complete', 1718000000000, 1718000065250);

INSERT INTO phases (id, run_id, ordinal, stage, phase, level, config_json, started_ns, ended_ns,
                    status)
VALUES (1, 'run-v1', 1, 'steady', 'rate-2', 2.0, '{"rate":2,"duration_s":60}', 1250000,
        60001250000, 'complete');

INSERT INTO requests (id, run_id, phase_id, sequence, task_id, persona, intended_ns, sent_ns,
                      first_byte_ns, first_token_ns, first_answer_ns, end_ns, outcome, http_status,
                      curl_code, error_message, retry_after_s, input_tokens, output_tokens,
                      token_source, finish_reason, answer_text)
VALUES (1, 'run-v1', 1, 0, 'refund-policy-01', 'customer', 1250000, 1384000, 182500000, 214750000,
        640125000, 2398400000, 'ok', 200, NULL, '', NULL, 412, 96, 'usage', 'stop',
        'Refunds are issued within 14 days of the return reaching our warehouse.'),
       (2, 'run-v1', 1, 1, 'order-status-07', 'customer', 501250000, 501331000, NULL, NULL, NULL,
        30501331000, 'timeout', NULL, 28, 'first token timeout after 30s', NULL, 388, NULL, '', '',
        '');

PRAGMA user_version = 1;
