#pragma once
// tectl's commands. Each prints its result on stdout and its errors on stderr,
// and returns the exit code: 0 ok, 1 the server or the store refused or failed.
// Usage errors (exit 2) are caught earlier, by ParseCommandLine.
#include "cli/model_source.h"
#include "cli/options.h"
#include "geodesic/v1/operator.grpc.pb.h"

namespace geodesic::cli {

// get KIND [ID]: a table of the kind's entities, or one of them; JSON/YAML of
// the list response or of the one entity.
int RunGet(const Options& options, ModelSource& source);

// describe KIND ID: every field of one entity and what follows from it (a
// link's reverse, a facility's nodes, links and fabric...), as YAML or JSON.
int RunDescribe(const Options& options, ModelSource& source);

// export [FILE]: the inventory (facilities, nodes, links, fabrics, services,
// workloads) in the project's topology format, written atomically to FILE or
// to stdout.
int RunExport(const Options& options, ModelSource& source);

// journal: the store's journal, newest `limit` entries or from `from_seq`.
int RunJournal(const Options& options, ModelSource& source);

// import FILE: reads the file, then imports it through `stub` (the Operator
// API of options.server) or, when `stub` is null, straight into the store in
// options.store_dir, which no pathcomp may have open.
int RunImport(const Options& options, v1::Operator::StubInterface* stub);

// solve --graph G: the elephant-flow allocation of a topology and its demands,
// computed here with pathcomp's solver (every link up): objective, MLU, demand,
// routed, solve time and every link's load and capacity.
int RunSolve(const Options& options);

// drain / undrain ID: adds or removes the drain intent of a link, node or facility.
int RunDrain(const Options& options, v1::Operator::StubInterface& stub);

}  // namespace geodesic::cli
