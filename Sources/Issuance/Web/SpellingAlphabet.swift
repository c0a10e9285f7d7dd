import PortalWeb

/// Spelling alphabets for reading a teleTAN on the phone: DIN 5009 (2022, city names) in German,
/// ICAO/NATO in English. Digits are spelled as words, capitalised like the letters: "Zwo", not
/// "Zwei" (which is easily heard as "Drei"), and ICAO's "Niner" (plain "nine" sounds like the
/// German "nein" to a caller in Germany).
package enum SpellingAlphabet {
    package static func spell(_ character: Character, in language: Language) -> String {
        let table = language == .german ? german : english
        return table[character] ?? String(character)
    }

    private static let german: [Character: String] = [
        "A": "Aachen", "B": "Berlin", "C": "Chemnitz", "D": "Düsseldorf", "E": "Essen", "F": "Frankfurt",
        "G": "Goslar", "H": "Hamburg", "I": "Ingelheim", "J": "Jena", "K": "Köln", "L": "Leipzig",
        "M": "München", "N": "Nürnberg", "O": "Offenbach", "P": "Potsdam", "Q": "Quickborn", "R": "Rostock",
        "S": "Salzwedel", "T": "Tübingen", "U": "Unna", "V": "Völklingen", "W": "Wuppertal", "X": "Xanten",
        "Y": "Ypsilon", "Z": "Zwickau",
        "2": "Zwo", "3": "Drei", "4": "Vier", "5": "Fünf", "6": "Sechs", "7": "Sieben", "8": "Acht", "9": "Neun",
    ]

    private static let english: [Character: String] = [
        "A": "Alfa", "B": "Bravo", "C": "Charlie", "D": "Delta", "E": "Echo", "F": "Foxtrot", "G": "Golf",
        "H": "Hotel", "I": "India", "J": "Juliett", "K": "Kilo", "L": "Lima", "M": "Mike", "N": "November",
        "O": "Oscar", "P": "Papa", "Q": "Quebec", "R": "Romeo", "S": "Sierra", "T": "Tango", "U": "Uniform",
        "V": "Victor", "W": "Whiskey", "X": "X-ray", "Y": "Yankee", "Z": "Zulu",
        "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight", "9": "Niner",
    ]
}
