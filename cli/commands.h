#pragma once
// tectl's commands. Each prints its result on stdout and its errors on stderr,
// and returns the exit code: 0 ok, 1 the server or the store refused or failed
// (audit: kExitDependencies when it found any).
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

// backup DIR: a consistent copy of the store of the pathcomp at
// options.server, streamed into DIR (new or empty) with its manifest.
int RunBackup(const Options& options);
// restore --from DIR --store STORE [--force]: STORE becomes the backup in DIR,
// offline (no pathcomp may have it open), after every check passed.
int RunRestore(const Options& options);

// solve --graph G: the elephant-flow allocation of a topology and its demands,
// computed here with pathcomp's solver (every link up): objective, MLU, demand,
// routed, solve time and every link's load and capacity.
int RunSolve(const Options& options);

// drain / undrain: adds (after a pre-check it shows) or removes the drain
// intent of a link, node, facility or fabric plane.
int RunDrain(const Options& options, v1::Operator::StubInterface& stub);
// tectl auto-drain pause|resume|status.
int RunAutoDrain(const Options& options, v1::Operator::StubInterface& stub);

// workload add|remove: one workload from flags, or every one of a file.
int RunWorkload(const Options& options, v1::Operator::StubInterface& stub);
// pin / unpin CHAIN: the pin intent of an agent chain.
int RunPin(const Options& options, v1::Operator::StubInterface& stub);
// override LINK: the metric-override intent of a link (admin).
int RunOverride(const Options& options, v1::Operator::StubInterface& stub);
// whatif fail ...: the impact of failures, computed by pathcomp, changing nothing.
int RunWhatIf(const Options& options, v1::Operator::StubInterface& stub);
// audit: the current plan's single-facility dependencies; kExitDependencies when any.
int RunAudit(const Options& options, v1::Operator::StubInterface& stub);
// explain chain ID: one agent chain hop by hop, and its backups.
int RunExplain(const Options& options, v1::Operator::StubInterface& stub);
// plan history | plan diff A B.
int RunPlan(const Options& options, v1::Operator::StubInterface& stub);
// events watch: the event stream, one line per event.
int RunEvents(const Options& options, v1::Operator::StubInterface& stub);
// audit-log: the operator audit log.
int RunAuditLog(const Options& options, v1::Operator::StubInterface& stub);
// drill run FILE: a failure drill on the simulator; kExitDrillFailed when an
// expectation fails.
int RunDrill(const Options& options);
// completion bash: the completion script.
int RunCompletion(const Options& options);

}  // namespace geodesic::cli
