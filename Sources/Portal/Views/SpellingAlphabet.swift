/// Spelling alphabets for reading a teleTAN on the phone: DIN 5009 (2022, city names) in German,
/// ICAO/NATO in English. Digits are spelled as words ("zwo", not "zwei", to avoid "drei").
enum SpellingAlphabet {
    static func spell(_ character: Character, in language: Language) -> String {
        let table = language == .german ? german : english
        return table[character] ?? String(character)
    }

    private static let german: [Character: String] = [
        "A": "Aachen", "B": "Berlin", "C": "Chemnitz", "D": "Düsseldorf", "E": "Essen", "F": "Frankfurt",
        "G": "Goslar", "H": "Hamburg", "I": "Ingelheim", "J": "Jena", "K": "Köln", "L": "Leipzig",
        "M": "München", "N": "Nürnberg", "O": "Offenbach", "P": "Potsdam", "Q": "Quickborn", "R": "Rostock",
        "S": "Salzwedel", "T": "Tübingen", "U": "Unna", "V": "Völklingen", "W": "Wuppertal", "X": "Xanten",
        "Y": "Ypsilon", "Z": "Zwickau",
        "2": "zwo", "3": "drei", "4": "vier", "5": "fünf", "6": "sechs", "7": "sieben", "8": "acht", "9": "neun",
    ]

    private static let english: [Character: String] = [
        "A": "Alfa", "B": "Bravo", "C": "Charlie", "D": "Delta", "E": "Echo", "F": "Foxtrot", "G": "Golf",
        "H": "Hotel", "I": "India", "J": "Juliett", "K": "Kilo", "L": "Lima", "M": "Mike", "N": "November",
        "O": "Oscar", "P": "Papa", "Q": "Quebec", "R": "Romeo", "S": "Sierra", "T": "Tango", "U": "Uniform",
        "V": "Victor", "W": "Whiskey", "X": "X-ray", "Y": "Yankee", "Z": "Zulu",
        "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight", "9": "nine",
    ]
}
