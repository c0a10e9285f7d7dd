import Foundation

/// One question of the call script: what the agent asks and ticks when the caller confirms it.
package struct HotlineCheck: Sendable, Codable, Equatable {
    package let id: String
    package let labelDE: String
    package let labelEN: String
    /// What to say to ask it; optional.
    package let sayDE: String?
    package let sayEN: String?
    /// A required check must be ticked before a teleTAN can be issued.
    package let required: Bool

    enum CodingKeys: String, CodingKey {
        case id, required
        case labelDE = "label_de", labelEN = "label_en", sayDE = "say_de", sayEN = "say_en"
    }

    package init(id: String, labelDE: String, labelEN: String, sayDE: String? = nil, sayEN: String? = nil, required: Bool) {
        self.id = id
        self.labelDE = labelDE
        self.labelEN = labelEN
        self.sayDE = sayDE
        self.sayEN = sayEN
        self.required = required
    }
}

/// The checks of a hotline call (`--hotline-checks FILE`, a JSON array of objects with `id`,
/// `label_de`, `label_en`, `required` and optionally `say_de`, `say_en`). The shipped default is
/// a plausibility check in CWA's spirit; CWA never published its exact questions.
package struct HotlineChecks: Sendable, Equatable {
    package let all: [HotlineCheck]

    package init(_ all: [HotlineCheck]) {
        self.all = all
    }

    package var requiredIDs: [String] { all.filter(\.required).map(\.id) }

    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    package static func load(path: String) throws -> HotlineChecks {
        guard let data = FileManager.default.contents(atPath: path) else { throw Invalid(description: "cannot read \(path)") }
        let checks: [HotlineCheck]
        do {
            checks = try JSONDecoder().decode([HotlineCheck].self, from: data)
        } catch {
            throw Invalid(description: "\(path): expected a JSON array of {id, label_de, label_en, required, say_de?, say_en?}")
        }
        return try validated(checks, source: path)
    }

    static func validated(_ checks: [HotlineCheck], source: String) throws -> HotlineChecks {
        guard !checks.isEmpty else { throw Invalid(description: "\(source): no checks") }
        var seen = Set<String>()
        for check in checks {
            guard (1...40).contains(check.id.count), check.id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) else {
                throw Invalid(description: "\(source): the id \"\(check.id)\" must be 1 to 40 of a-z, 0-9 and _")
            }
            guard seen.insert(check.id).inserted else { throw Invalid(description: "\(source): the id \(check.id) appears twice") }
            guard !check.labelDE.isEmpty, !check.labelEN.isEmpty else {
                throw Invalid(description: "\(source): the check \(check.id) needs label_de and label_en")
            }
        }
        return HotlineChecks(checks)
    }

    /// The shipped checks (also in docs/hotline-checks.example.json).
    package static let standard = HotlineChecks([
        HotlineCheck(
            id: "positive_pcr",
            labelDE: "Positives PCR-Testergebnis von einem Labor",
            labelEN: "Positive PCR test result from a laboratory",
            sayDE: "Haben Sie ein positives PCR-Testergebnis von einem Labor erhalten?",
            sayEN: "Have you received a positive PCR test result from a laboratory?",
            required: true),
        HotlineCheck(
            id: "test_within_14_days",
            labelDE: "Test vor höchstens 14 Tagen gemacht",
            labelEN: "Test taken within the last 14 days",
            sayDE: "An welchem Tag wurde der Test gemacht?",
            sayEN: "On which day was the test taken?",
            required: true),
        HotlineCheck(
            id: "app_without_qr",
            labelDE: "Corona-Warn-App installiert, für diesen Test kein QR-Code verwendet",
            labelEN: "Corona-Warn-App installed, no QR code used for this test",
            sayDE: "Ist die Corona-Warn-App installiert? Haben Sie für diesen Test schon einen QR-Code gescannt?",
            sayEN: "Is the Corona-Warn-App installed? Did you already scan a QR code for this test?",
            required: true),
        HotlineCheck(
            id: "speaks_for_self",
            labelDE: "Die anrufende Person spricht für sich selbst",
            labelEN: "The caller speaks for themselves",
            sayDE: "Geht es um Ihr eigenes Testergebnis?",
            sayEN: "Is this about your own test result?",
            required: true),
    ])
}
