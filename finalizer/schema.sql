-- SPDX-License-Identifier: MIT
-- The result database (docs/schema.md), schema version 2: the one copy of its tables.
-- pfinalize embeds this file at build time (finalizer/schema_sql.py makes one C string per
-- section); the tests build their synthetic results from it (tests/e2e/report_synth.py).
-- A section runs from its "-- section: NAME" line to the next one.

-- section: tables
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- The quantities the result holds: CPU Time for hotspots, later Wait Time, Allocated Bytes...
CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
  unit TEXT NOT NULL,        -- 'ns', 'bytes' or 'count'
  aggregation TEXT NOT NULL, -- 'sum' or 'peak'
  kind TEXT NOT NULL,        -- the sample kind that carries it: 'cpu', ...
  description TEXT,
  main INTEGER NOT NULL DEFAULT 0, -- 1: the analysis's main metric (the default sort)
  display_order INTEGER);
-- Grouping attributes analyses attach to samples (wait kind, sync object; MPI function; later
-- regions); each analysis adds its columns. Id 0 means "no context" and has no row.
CREATE TABLE contexts (id INTEGER PRIMARY KEY,
  wait_kind TEXT,   -- 'mutex', 'cond', 'sleep', 'read', ... (docs/schema.md)
  object INTEGER,   -- the sync object: an address, an fd, a pid; 0 for none
  object_type TEXT, -- 'mutex', 'fd', 'pid', ...; NULL when the wait has no object
  object_name TEXT, -- a variable's symbol, an fd's path; NULL when unknown
  mpi_function TEXT, -- an MPI call's function: 'MPI_Send', 'MPI_Barrier', ...
  communicator_size INTEGER, -- ranks in its communicator; NULL when it has none
  region TEXT,      -- the regions the program named, 'outer/inner'; NULL: in none
  origin_thread_id INTEGER REFERENCES threads(id), -- the thread that began the work
  origin_stack_id INTEGER REFERENCES stacks(id));  -- ... at this stack (an OpenMP region)
CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,
  parent_id INTEGER REFERENCES processes(id), origin TEXT, generation INTEGER,
  host TEXT, rank INTEGER, exe TEXT, command_line TEXT, start_ns INTEGER,
  end_ns INTEGER);
CREATE TABLE threads (id INTEGER PRIMARY KEY,
  process_id INTEGER REFERENCES processes(id), tid INTEGER, name TEXT,
  start_ns INTEGER, end_ns INTEGER, cpu_ns INTEGER, samples INTEGER, weight INTEGER,
  time_ns INTEGER, os_name TEXT, parent_thread_id INTEGER REFERENCES threads(id),
  parent_stack_id INTEGER REFERENCES stacks(id));
CREATE TABLE modules (id INTEGER PRIMARY KEY, path TEXT, name TEXT, build_id TEXT,
  kind TEXT, resolved_path TEXT, debug_path TEXT, symbols TEXT, status TEXT,
  role TEXT);
CREATE TABLE source_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT,
  mangled TEXT, module_id INTEGER REFERENCES modules(id),
  source_file_id INTEGER REFERENCES source_files(id), line INTEGER, language TEXT,
  resolved INTEGER,
  kind TEXT); -- 'symbol' (named), 'range' (func@0x<start> of an FDE range), 'address' or
  -- 'method' (named from the Python method tables as cProfile names it)

CREATE TABLE frames (id INTEGER PRIMARY KEY,
  function_id INTEGER REFERENCES functions(id),
  module_id INTEGER REFERENCES modules(id), address INTEGER, inline_depth INTEGER,
  source_file_id INTEGER REFERENCES source_files(id), line INTEGER);
CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES stacks(id),
  frame_id INTEGER REFERENCES frames(id), depth INTEGER);
-- Per metric, thread, stack and context: events aggregated and their value in the metric's unit.
CREATE TABLE samples (thread_id INTEGER REFERENCES threads(id),
  stack_id INTEGER REFERENCES stacks(id), metric_id INTEGER REFERENCES metrics(id),
  context_id INTEGER NOT NULL DEFAULT 0, count INTEGER, value INTEGER,
  PRIMARY KEY (metric_id, thread_id, stack_id, context_id)) WITHOUT ROWID;
-- Every event in time order: the key is the time index (range scans, no separate index).
CREATE TABLE timeline (time_ns INTEGER, thread_id INTEGER REFERENCES threads(id),
  metric_id INTEGER REFERENCES metrics(id), stack_id INTEGER REFERENCES stacks(id),
  context_id INTEGER NOT NULL DEFAULT 0, value INTEGER,
  PRIMARY KEY (time_ns, thread_id, metric_id)) WITHOUT ROWID;
CREATE TABLE lost (process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), reason TEXT, count INTEGER,
  weight INTEGER);
CREATE TABLE streams (path TEXT, process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), bytes INTEGER, bytes_skipped INTEGER,
  chunks INTEGER, chunks_damaged INTEGER, problem TEXT, samples INTEGER,
  samples_unknown_stack INTEGER);
-- What the collector noted about a thread's sampling (no stream, a stream stopped early, the
-- timer instead of task-clock): one row per note.
CREATE TABLE notes (process_id INTEGER REFERENCES processes(id), tid INTEGER, kind TEXT,
  detail TEXT);
-- memory-consumption: values over time per process ('Live Heap', 'RSS', in bytes).
CREATE TABLE counters (time_ns INTEGER NOT NULL, process_id INTEGER REFERENCES processes(id),
  name TEXT NOT NULL, value INTEGER,
  PRIMARY KEY (name, process_id, time_ns)) WITHOUT ROWID;
-- memory-consumption: each process's totals and the agent's own figures (docs/schema.md).
CREATE TABLE process_memory (process_id INTEGER PRIMARY KEY REFERENCES processes(id),
  peak_bytes INTEGER, peak_ns INTEGER, leaked_bytes INTEGER, ended INTEGER,
  untracked_allocs INTEGER, untracked_bytes INTEGER, unknown_frees INTEGER,
  agent_bytes INTEGER, agent_peak_bytes INTEGER, sample_bytes INTEGER, hooks INTEGER,
  sampled_allocs INTEGER, cache_misses INTEGER, cache_checks INTEGER,
  cache_collisions INTEGER, cache_escalations INTEGER);
CREATE TABLE python_notes (process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), kind TEXT, count INTEGER, detail TEXT);
-- Instances of OpenMP parallel regions: their context is their implicit barrier's waits'.
CREATE TABLE openmp_regions (process_id INTEGER REFERENCES processes(id),
  thread_id INTEGER REFERENCES threads(id), -- the thread that began it
  context_id INTEGER REFERENCES contexts(id), start_ns INTEGER, duration_ns INTEGER,
  threads INTEGER);

-- section: symbol_indexes
-- Built once their tables are full: sorting once beats inserting in order.
CREATE INDEX frames_function ON frames(function_id);
CREATE INDEX functions_module ON functions(module_id);

-- section: sample_indexes
CREATE INDEX stacks_parent ON stacks(parent_id);
CREATE INDEX samples_stack ON samples(stack_id);
