-- SPDX-License-Identifier: MIT
-- The result database of schema version 1, as pfinalize wrote it before metrics (CPU time in
-- samples.weight and samples.time_ns, the timeline's weights): an old format preport still
-- reads. Frozen as it was: it is never changed to follow the current schema, which is
-- finalizer/schema.sql. tests/e2e/report_synth.py builds schema-1 results from it.
-- section: tables
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,
  parent_id INTEGER REFERENCES processes(id), origin TEXT, generation INTEGER, host TEXT,
  rank INTEGER, exe TEXT, command_line TEXT, start_ns INTEGER, end_ns INTEGER);
CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER REFERENCES processes(id),
  tid INTEGER, name TEXT, start_ns INTEGER, end_ns INTEGER, cpu_ns INTEGER,
  samples INTEGER, weight INTEGER, time_ns INTEGER);
CREATE TABLE modules (id INTEGER PRIMARY KEY, path TEXT, name TEXT, build_id TEXT,
  kind TEXT, resolved_path TEXT, debug_path TEXT, symbols TEXT, status TEXT, role TEXT);
CREATE TABLE source_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT, mangled TEXT,
  module_id INTEGER REFERENCES modules(id),
  source_file_id INTEGER REFERENCES source_files(id), line INTEGER, language TEXT,
  resolved INTEGER);
CREATE TABLE frames (id INTEGER PRIMARY KEY, function_id INTEGER REFERENCES functions(id),
  module_id INTEGER REFERENCES modules(id), address INTEGER, inline_depth INTEGER,
  source_file_id INTEGER REFERENCES source_files(id), line INTEGER);
CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES stacks(id),
  frame_id INTEGER REFERENCES frames(id), depth INTEGER);
CREATE TABLE samples (thread_id INTEGER REFERENCES threads(id),
  stack_id INTEGER REFERENCES stacks(id), count INTEGER, weight INTEGER, time_ns INTEGER,
  PRIMARY KEY (thread_id, stack_id)) WITHOUT ROWID;
CREATE TABLE timeline (time_ns INTEGER, thread_id INTEGER REFERENCES threads(id),
  stack_id INTEGER REFERENCES stacks(id), weight INTEGER, PRIMARY KEY (time_ns,
  thread_id)) WITHOUT ROWID;
CREATE TABLE lost (process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), reason TEXT, count INTEGER, weight INTEGER);
CREATE TABLE streams (path TEXT, process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), bytes INTEGER, bytes_skipped INTEGER,
  chunks INTEGER, chunks_damaged INTEGER, problem TEXT, samples INTEGER,
  samples_unknown_stack INTEGER);
CREATE TABLE python_notes (process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), kind TEXT, count INTEGER, detail TEXT);

-- section: symbol_indexes
CREATE INDEX frames_function ON frames(function_id);
CREATE INDEX functions_module ON functions(module_id);

-- section: sample_indexes
CREATE INDEX stacks_parent ON stacks(parent_id);
CREATE INDEX samples_stack ON samples(stack_id);
