import Foundation

/// A health authority that may ask for EVENT teleTANs ("Kopfnummer" and name in CWA).
package struct HealthAuthority: Sendable, Equatable {
    package let id: String
    package let name: String

    package init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The configured list (`--health-authorities FILE`): CSV with the columns id and name, one
/// authority per line, an optional header line `id,name`, `#` comment lines. Fields may be
/// quoted as in RFC 4180 (a name with a comma).
package struct HealthAuthorities: Sendable {
    package let all: [HealthAuthority]

    package init(_ all: [HealthAuthority] = []) {
        self.all = all
    }

    package func find(_ id: String) -> HealthAuthority? {
        all.first { $0.id == id }
    }

    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    package static func load(path: String) throws -> HealthAuthorities {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw Invalid(description: "cannot read \(path) as UTF-8 text")
        }
        return try parse(text, source: path)
    }

    package static func parse(_ text: String, source: String = "health authorities") throws -> HealthAuthorities {
        var authorities: [HealthAuthority] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = try csvFields(trimmed, line: index + 1, source: source)
            if authorities.isEmpty, fields.map({ $0.lowercased() }) == ["id", "name"] { continue }
            guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else {
                throw Invalid(description: "\(source), line \(index + 1): expected two fields, id and name")
            }
            guard fields[0].count <= 64, fields[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
                throw Invalid(description: "\(source), line \(index + 1): an id is up to 64 letters, digits, '-', '_' or '.'")
            }
            guard !authorities.contains(where: { $0.id == fields[0] }) else {
                throw Invalid(description: "\(source), line \(index + 1): the id \(fields[0]) appears twice")
            }
            authorities.append(HealthAuthority(id: fields[0], name: fields[1]))
        }
        return HealthAuthorities(authorities)
    }

    /// The fields of one CSV line (RFC 4180 quoting; no line breaks inside a field).
    private static func csvFields(_ line: String, line number: Int, source: String) throws -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(line)[...]
        while let char = chars.popFirst() {
            if quoted {
                if char == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
                } else {
                    field.append(char)
                }
            } else if char == "\"" && field.isEmpty {
                quoted = true
            } else if char == "," {
                fields.append(field.trimmingCharacters(in: .whitespaces))
                field = ""
            } else {
                field.append(char)
            }
        }
        guard !quoted else { throw Invalid(description: "\(source), line \(number): a quote is not closed") }
        fields.append(field.trimmingCharacters(in: .whitespaces))
        return fields
    }
}
