"""Queries q17–q24: dogs, visitor passes, delay compensation, history, funding, funicular,
zones, children and strollers. Format: see batch1."""

CLUSTERS = [
    (
        "q17",
        "Can I bring my dog on public transport?",
        [
            "Which dogs travel free?",
            "What ticket does a large dog need?",
            "What rules apply on board?",
        ],
        "Small dogs in a carrier and guide or assistance dogs travel free. A larger dog needs a "
        "child single ticket (1.05 euros) or is covered by the owner's monthly pass. Dogs must "
        "be on a short leash and may not sit on seats; a muzzle is required on the funicular.",
        "Dogs are welcome: small dogs in a bag and guide dogs ride free, big dogs pay a child "
        "fare, and they must be on a leash.",
        1,
        "555",
        [
            (
                5,
                "550",
                "Small pets in a closed carrier travel free, as do guide and assistance dogs. Larger "
                "dogs need a child single ticket at 1.05 euros, unless the owner has a monthly or "
                "annual pass, which covers one dog.",
            ),
            (
                5,
                "005",
                "Dogs must be kept on a short leash on all vehicles and may not occupy seats. On "
                "the Castle Hill funicular, which is often crowded, dogs must also wear a muzzle.",
            ),
            (
                4,
                "500",
                "Assistance animals are always welcome on trams, buses, ferries and the funicular, "
                "without a ticket and at any time of day.",
            ),
            (
                3,
                "003",
                "Drivers may refuse a dog that behaves aggressively or when a vehicle is already "
                "full, for example on match days.",
            ),
            (
                2,
                "000",
                "The Skerry Island beach is closed to dogs from June to August; dogs are allowed on "
                "the ferry all year.",
            ),
            (
                1,
                "050",
                "Dog licences in Vellmar cost 90 euros per year for the first dog and are paid to "
                "the city's tax department.",
            ),
            (
                1,
                "000",
                "The Dog Days summer concert series at Harbourfront has nothing to do with animals: "
                "it is named after the hottest weeks of the year.",
            ),
        ],
    ),
    (
        "q18",
        "What is the best ticket for a tourist visiting for three days?",
        [
            "What Visitor passes exist and what do they cost?",
            "What does the Visitor pass include?",
            "Where can visitors buy it?",
        ],
        "The Visitor pass costs 9 euros for 24 hours, 15 euros for 48 hours and 20 euros for 72 "
        "hours; for three days the 72-hour pass is best. It covers all trams, buses, the harbour "
        "ferry and the Castle Hill funicular in all zones, including the airport supplement. It "
        "is sold in VTA Go, at ticket machines and at the airport.",
        "The Visitor pass costs 9 euros for 24 hours, 15 euros for 48 hours and 20 euros "
        "for 72 hours, so for three days the 72-hour pass is best; it covers all trams, "
        "buses, the harbour ferry and the Castle Hill funicular in all zones, including "
        "the airport supplement, and is sold in VTA Go, at ticket machines and at the "
        "airport.",
        1,
        "555",
        [
            (
                5,
                "500",
                "Visitor passes are valid for 24 hours (9 euros), 48 hours (15 euros) or 72 hours "
                "(20 euros) from the first tap, with unlimited travel during that time.",
                "visitor-pass",
            ),
            (
                5,
                "050",
                "The Visitor pass covers every VTA service in all three zones: trams, buses, the "
                "Skerry Island ferry and the Castle Hill funicular. The airport supplement is "
                "included.",
            ),
            (
                4,
                "005",
                "Tourists can buy passes in the VTA Go app, at any ticket machine or at the VTA "
                "machine in the airport arrivals hall, paying by card or phone.",
            ),
            (
                4,
                "400",
                "Guests staying three days typically save about 40 percent with the three-day "
                "card compared with buying single tickets.",
            ),
            (
                3,
                "000",
                "The Vellmar City Card, sold by the tourist office for 39 euros, adds free museum "
                "entry to a 72-hour transit pass.",
            ),
            (
                2,
                "000",
                "Tourist information offices are at Central Station and on Harbourfront, open "
                "daily from 09:00 to 18:00.",
            ),
            (
                1,
                "400",
                "Three-day rail passes for the whole region are sold by NorthRail for 49 euros and "
                "are not valid on trams or city buses.",
            ),
        ],
    ),
    (
        "q19",
        "How do I get compensation when my tram is badly delayed?",
        [
            "When is a rider entitled to compensation?",
            "How do you claim?",
            "What do pass holders get?",
        ],
        "Under the VTA passenger charter, a delay of 30 minutes or more at your destination "
        "entitles you to a refund of the single fare. Claim within 14 days using the delay form "
        "in VTA Go with the journey taken from the Tide card. Monthly and annual pass holders "
        "receive a 5 euro credit after five qualifying delays in a month.",
        "If your tram arrives 30 minutes late you can claim back the fare in the app within two "
        "weeks; pass holders get 5 euros after five delays.",
        1,
        "555",
        [
            (
                5,
                "550",
                "The passenger charter promises a refund of the single fare when you reach your "
                "destination 30 minutes or more behind the timetable. Claims are made in VTA Go "
                "within 14 days of the journey.",
            ),
            (
                5,
                "005",
                "Season ticket holders are compensated differently: after five delays of 30 "
                "minutes or more in one month, a credit of 5 euros is added to the Tide card.",
            ),
            (
                4,
                "050",
                "To claim, open the delay form in VTA Go and pick the journey from your Tide card "
                "history; the tap times prove the delay, so no receipt is needed.",
            ),
            (
                3,
                "300",
                "Delays caused by severe weather, police operations or strikes announced in "
                "advance are excluded from the charter.",
            ),
            (
                2,
                "000",
                "Punctuality in 2024: 91 percent of trams and 84 percent of buses reached their "
                "terminus less than three minutes late.",
            ),
            (
                1,
                "500",
                "Passengers of delayed flights at Vellmar Airport may claim up to 600 euros from "
                "the airline under EU rules.",
            ),
            (
                1,
                "000",
                "The tram timetable is built with recovery time at each terminus, so a late tram "
                "can leave again on time.",
            ),
        ],
    ),
    (
        "q20",
        "How did Vellmar's tram network develop over time?",
        [
            "When did trams first run?",
            "When were trams electrified?",
            "What happened to the network in the 1960s?",
            "When did the revival start?",
        ],
        "Horse trams first ran in 1881 and the network was electrified in 1902. In 1962 most "
        "lines were closed and replaced by buses, leaving only today's Line 1. The revival began "
        "with Line 2 in 1999 and continued with Line 3 in 2021, with Line 4 planned for 2028.",
        "Trams started in 1902 and were closed in the 1960s, then new lines came later.",
        0,
        "0030",
        [
            (
                5,
                "5500",
                "Vellmar's first horse-drawn trams ran in 1881 between the harbour and the market "
                "square. Electric operation began in 1902, and by 1930 the network had nine lines.",
            ),
            (
                5,
                "0055",
                "In 1962 the city closed most tram lines in favour of buses; only the harbour to "
                "Northfield route survived, today's Line 1. The revival started with Line 2 to "
                "University Hill in 1999.",
            ),
            (
                4,
                "0005",
                "Line 3 to the airport opened in 2021, the first new line in two decades, and the "
                "southern Line 4 is under construction.",
            ),
            (
                4,
                "0500",
                "The electrification of 1902 was paid for by the Vellmar Electric Company, which "
                "ran the trams until the city took them over in 1921.",
            ),
            (
                3,
                "0000",
                "The Tram Museum at the Harbour depot shows a horse tram of 1881 and cars from "
                "every decade; it opens on the first Sunday of each month.",
            ),
            (
                2,
                "0000",
                "Old tram tracks can still be seen in the cobblestones of Market Square, where "
                "Line 6 ran until 1962.",
            ),
            (
                1,
                "5000",
                "The city of Osterby opened its first tramway in 1881 too, but closed it for good "
                "in 1958.",
            ),
            (
                1,
                "0000",
                "The 1881 census counted 64,000 inhabitants in Vellmar; today the city has "
                "410,000.",
            ),
        ],
    ),
    (
        "q21",
        "How is public transport in Vellmar funded?",
        [
            "What share of costs do fares cover?",
            "Who pays the rest?",
            "How are major projects financed?",
        ],
        "Fares cover about 38 percent of VTA's operating costs of 290 million euros a year. The "
        "city pays a subsidy of about 150 million, and a regional transport levy on employers "
        "brings about 30 million. Large projects such as Line 4 are financed 60 percent by the "
        "national government and the rest by the city and VTA borrowing.",
        "Fares cover 38 percent of the costs; the city subsidy and a levy on employers pay most "
        "of the rest.",
        1,
        "550",
        [
            (
                5,
                "550",
                "VTA's operating costs were 290 million euros in 2024. Ticket revenue covered 38 "
                "percent; a city subsidy of 150 million and the regional employers' levy of 30 "
                "million made up the rest.",
            ),
            ("@line4-funding", 4, "005"),
            (
                4,
                "050",
                "Companies with more than 50 employees in the Vellmar region pay a transport levy "
                "of 0.4 percent of their payroll, which goes to VTA.",
            ),
            (
                3,
                "300",
                "Fare revenue fell sharply in 2020 and 2021 and only returned to its 2019 level in "
                "2024, helped by the Campus pass.",
            ),
            (
                2,
                "000",
                "VTA's annual report and audited accounts are published each April on its website.",
            ),
            (
                1,
                "500",
                "Vellmar Airport is financed entirely by landing fees and shops and gets no money "
                "from the city.",
            ),
            (
                1,
                "000",
                "The Harbour Festival is funded by sponsors and ticket sales and makes a small "
                "profit for the city.",
            ),
        ],
    ),
    (
        "q22",
        "How does the Castle Hill funicular work and when is it closed?",
        [
            "What does the funicular connect and how long is the ride?",
            "What ticket is valid?",
            "When is it closed?",
        ],
        "The funicular links Market Square with Castle Hill in a 3 minute ride, running every "
        "6 minutes from 07:00 to 22:00. All VTA tickets and passes including the Tide card are "
        "valid. It closes every January for annual maintenance and in thunderstorms.",
        "The funicular links Market Square with Castle Hill in a 3 minute ride, running "
        "every 6 minutes from 07:00 to 22:00; all VTA tickets and passes including the "
        "Tide card are valid, and it closes every January for annual maintenance and in "
        "thunderstorms.",
        1,
        "555",
        [
            (
                5,
                "505",
                "The Castle Hill funicular climbs 95 metres from Market Square to the castle in "
                "three minutes. Its two cabins pass each other halfway. It runs every 6 minutes "
                "from 07:00 to 22:00, except in January, when it closes for maintenance.",
            ),
            (
                5,
                "050",
                "Normal VTA fares apply on the funicular: singles, passes, the Tide card and the "
                "Visitor pass are all valid.",
            ),
            (
                4,
                "004",
                "During thunderstorms the funicular stops running, and each January the cables "
                "and brakes are inspected for four weeks; bus 15 replaces it.",
            ),
            (
                3,
                "500",
                "Opened in 1895, the funicular was originally driven by water ballast; it was "
                "converted to an electric winch in 1955.",
            ),
            (
                2,
                "000",
                "Castle Hill's museum and gardens are open from 10:00 to 18:00, with a view across "
                "the harbour.",
            ),
            (
                1,
                "000",
                "The cable car at Osterby ski resort is closed from April to November and does "
                "not accept VTA tickets.",
            ),
            (
                1,
                "500",
                "Bus 15 climbs Castle Hill by the old road in about 12 minutes, every 15 minutes.",
            ),
        ],
    ),
    (
        "q23",
        "What are the fare zones and how do they affect the price?",
        [
            "What are the zones?",
            "What does a single ticket cost per zone combination?",
            "What happens when you cross into zone C?",
        ],
        "The network has three zones: A (the city centre inside the ring road), B (the suburbs) "
        "and C (the outer villages and the airport area). A single for zones A and B costs 2.10 "
        "euros; adding zone C raises it to 3.20 euros. A rider with an A–B pass travelling into "
        "zone C needs an extension ticket of 1.10 euros.",
        "There are three zones: A, the city centre inside the ring road, B, the suburbs, "
        "and C, the outer villages and the airport area; a single for zones A and B costs"
        " 2.10 euros, adding zone C raises it to 3.20 euros, and A–B pass holders "
        "travelling into zone C need an extension ticket of 1.10 euros.",
        1,
        "555",
        [
            (
                5,
                "500",
                "Vellmar is split into three fare zones: zone A covers the city centre inside the "
                "ring road, zone B the suburbs, and zone C the outer villages, the airport and "
                "Skerry Island.",
            ),
            (
                5,
                "055",
                "A single ticket for zones A and B costs 2.10 euros, and one valid in all three "
                "zones costs 3.20 euros. Passengers with an A–B season ticket who travel on into "
                "zone C buy an extension ticket for 1.10 euros.",
            ),
            (
                4,
                "050",
                "Most trips inside the city never leave the first two rings, so the standard fare "
                "of 2.10 euros is what most riders pay.",
            ),
            ("@single-fare", 3, "040"),
            (
                3,
                "500",
                "Zone boundaries are shown on the network map by coloured bands and announced on "
                "board when a vehicle enters zone C.",
            ),
            (
                2,
                "000",
                "The fare structure was simplified in 2019 from five zones to three when the Tide "
                "card was introduced.",
            ),
            (
                1,
                "500",
                "Vellmar has four time zones on its clock tower for tourists: local time, London, "
                "New York and Tokyo.",
            ),
        ],
    ),
    (
        "q24",
        "How do I travel with small children and a stroller?",
        [
            "Do young children pay?",
            "Where do strollers go on trams and buses?",
            "Is there a limit on strollers?",
        ],
        "Children under 6 travel free; from 6 to 18 they pay half fare. Strollers use the "
        "multi-purpose area by the middle doors of trams and buses, and the adult pushing a "
        "stroller does not need to fold it. Buses take at most two strollers, or one when a "
        "wheelchair is on board.",
        "Children under 6 ride free and you can bring a stroller in the middle area of trams "
        "and buses; buses fit two strollers.",
        1,
        "554",
        [
            ("@youth-fares", 5, "500"),
            (
                5,
                "055",
                "Prams and strollers go in the multi-purpose area by the middle doors of every tram "
                "and bus and do not need to be folded. A bus can take at most two strollers, or one "
                "if a wheelchair user is on board.",
            ),
            (
                4,
                "050",
                "Parents can board trams with a pushchair at any door; the middle doors are closest "
                "to the flat floor area with folding seats.",
            ),
            (
                3,
                "004",
                "When a bus is full, the driver may ask parents to wait for the next one; trams have "
                "room for up to six strollers.",
            ),
            (
                2,
                "000",
                "Baby changing tables are available in the toilets at Central Station and at the "
                "Harbourfront ferry terminal.",
            ),
            (
                1,
                "500",
                "At Vellmar's swimming pools children under 4 swim free with a paying adult.",
            ),
            (
                1,
                "000",
                "The toy train at Harbourfront park runs in summer and costs 2 euros per ride.",
            ),
        ],
    ),
]
