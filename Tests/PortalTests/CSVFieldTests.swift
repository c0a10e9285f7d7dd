import XCTest
@testable import PortalWeb

/// The one CSV guard (``CSVField``): wherever a cell may begin in some reading of the file, no
/// formula trigger; RFC 4180 quoting otherwise.
final class CSVFieldTests: XCTestCase {
    private func field(_ value: String) -> String {
        var out: [UInt8] = []
        CSVField.append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func testPlainValuesStayAsTheyAre() {
        for value in ["", "alice", "2001:db8::1", "a-b", "x=1", "me@example.org", "it's", "ä ö ü"] {
            XCTAssertEqual(field(value), value)
        }
    }

    func testEveryPlaceACellMayBeginGetsNoTrigger() {
        let cases: [(value: String, written: String)] = [
            // At the start (tab, CR and NUL: a spreadsheet that trims them first; spaces likewise).
            ("=1+1", "\"'=1+1\""), ("+49", "\"'+49\""), ("-x", "\"'-x\""), ("@SUM(1)", "\"'@SUM(1)\""),
            ("\tx", "\"'\tx\""), ("\0x", "\"'\0x\""), ("  =1", "\"  '=1\""),
            // After a separator or line break: German-locale Excel's ';', a ',' reading, a tab reading.
            ("x;=1+1;", "\"x;'=1+1;\""), ("x; =1+1", "\"x; '=1+1\""), ("x,+1", "\"x,'+1\""), ("x\t-1", "\"x\t'-1\""),
            ("x\r\n@a", "\"x\r\n'@a\""), ("x;\t=1", "\"x;'\t'=1\""),
            // After a quote that opens a cell in the ';' reading, not after one inside a cell (JSON).
            ("x;\"=1", "\"x;\"\"'=1\""), ("x; \" =1", "\"x; \"\" '=1\""), ("x\"=1", "\"x\"\"=1\""),
            (#"{"a":"=1","b":"-2"}"#, #""{""a"":""=1"",""b"":""-2""}""#),
            // Quoted without a change: separators, quotes, line breaks.
            ("a,b", "\"a,b\""), ("a;b", "\"a;b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("a\nb", "\"a\nb\""),
        ]
        for (value, written) in cases {
            XCTAssertEqual(field(value), written, value)
        }
    }
}
