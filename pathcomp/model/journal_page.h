#pragma once
// The store's journal as the Operator API shows it, one page at a time.
#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "state/store.h"

namespace geodesic::pathcomp {

// Entries from request.from_seq, or the newest `limit` (default 100, at most
// 10,000: InvalidArgument above) when from_seq is 0; what each entry changed
// is named (kind, id, deleted), its values left out.
[[nodiscard]] absl::StatusOr<v1::ListJournalResponse> JournalPage(const state::Store& store,
                                                                  const v1::ListJournalRequest& request);

}  // namespace geodesic::pathcomp
