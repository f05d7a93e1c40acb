#pragma once
// A whole ledger as text, to move it between stores
// (docs/ledger.md#moving-a-ledger-between-stores): `ledger-export --format
// ledger` writes it as JSON Lines, `ledger-import` reads it back. The first
// line is the header (every name and value as stored, the schema version,
// the hash the chain starts from), then one line per entry in order, its
// body byte for byte as stored, with its place and both hashes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/input/input_file.hpp"
#include "store/ledger_store.hpp"

namespace dpb::cli {

/// The export's first line names itself with this "format".
inline constexpr const char* kLedgerExportFormat = "dpbudget-ledger-export";

/// The largest export ledger-import reads: 1 GiB. Every verb holds a whole
/// ledger in memory; an entry takes about 1 KiB, so this is a million
/// entries, far more than any dataset's releases.
inline constexpr std::size_t kMaxLedgerExportBytes = std::size_t{1} << 30;
/// Its longest line: an entry whose body holds a spec of the largest size a
/// spec file may have (kMaxSpecBytes, 16 MiB), written as a JSON string
/// (each '"' escaped: at most twice as long), with room for the rest.
inline constexpr std::size_t kMaxLedgerExportLineBytes = std::size_t{40} << 20;

/// The ledger as ledger-export --format ledger writes it: the header line,
/// then one line per entry, each ending in '\n'. `header_hash`: the hash
/// entry 1 chains to. Throws LedgerError naming an entry (or the header)
/// whose text is not UTF-8, which JSON cannot carry byte for byte.
std::string ledger_export_lines(const store::Header& header, const std::string& header_hash,
                                const std::vector<store::Entry>& entries,
                                const std::string& ledger);

/// An export read back: what its lines say, checked for form only (the
/// chain is the caller's to check).
struct LedgerExport {
  store::Header header;
  std::string header_hash;
  std::vector<store::Entry> entries;
  std::string source;  ///< the input as messages name it (a path, or <stdin>)
  /// The line entries[i] was read from (the header is line 1).
  static std::size_t line_of(std::size_t i) { return i + 2; }
};

/// Reads an export from `input` (given to --from). Throws UsageError
/// "--from: NAME:LINE: what" for a line that is not JSON, lacks a field or
/// has one more, a field of the wrong type, another format or schema
/// version, an input larger than kMaxLedgerExportBytes or a line longer than
/// kMaxLedgerExportLineBytes, and an input without its header line.
LedgerExport read_ledger_export(InputFile& input);

}  // namespace dpb::cli
