"""Queries q01–q08: fares, fare capping, discounts, accessibility, night, bikes, airport.

Each cluster: (query id, query, sub-questions, reference answer, generated answer, human
label of the generated answer, its sub-question ratings, passages). A passage is
(grade 1..5, one rating 0..5 per sub-question, text[, key]); a key lets another query grade
the same passage: ("@key", grade, ratings) in that query's list.
"""

CLUSTERS = [
    (
        "q01",
        "What is the cheapest way to ride the trams to work every weekday?",
        [
            "How much does a monthly pass cost?",
            "How much does an annual pass cost?",
            "How does the daily fare cap compare for daily commuters?",
        ],
        "For a weekday commuter the annual pass (560 euros, about 46.70 a month) is cheapest; "
        "the monthly pass costs 58 euros, and paying per ride with the Tide card stops at the "
        "daily cap of 6.50 euros, which is dearer over a month.",
        "For a weekday commuter the annual pass is cheapest: 560 euros, about 46.70 euros"
        " a month, less than the monthly pass at 58 euros; paying per ride with the Tide "
        "card stops at the daily cap of 6.50 euros, which is dearer over a month.",
        1,
        "555",
        [
            (
                5,
                "550",
                "A monthly pass for zones A and B costs 58 euros and covers unlimited rides on "
                "trams, buses and the harbour ferry for one calendar month. Commuters who travel "
                "more than eleven days a month usually save money compared with single tickets.",
                "monthly-pass",
            ),
            (
                5,
                "054",
                "Riders who commit for a whole year pay 560 euros for the annual pass, the same "
                "as about nine and a half monthly passes. It can be paid in twelve instalments "
                "from a bank account and is loaded onto the Tide card.",
            ),
            (
                4,
                "005",
                "Pay-as-you-go travel on the Tide card stops charging once a rider has spent 6.50 "
                "euros in one day, the price of a day pass. Someone commuting twenty days a month "
                "would still spend up to 130 euros this way.",
                "daily-cap",
            ),
            (
                4,
                "440",
                "Season tickets at VTA: monthly passes start on any day and run for thirty days, "
                "while annual passes run for 365 days. Both are personal and show the holder's "
                "photo in the app.",
            ),
            (
                3,
                "000",
                "A single fare in zones A and B is 2.10 euros and allows transfers between trams "
                "and buses for 90 minutes after the first tap.",
                "single-fare",
            ),
            (
                2,
                "000",
                "Employers in Vellmar can join the Green Commute scheme and deduct transit costs "
                "from gross salary, but the scheme is administered by the tax office, not VTA.",
            ),
            (
                1,
                "300",
                "Until 2019 the monthly tram pass cost 49 euros and was sold only at kiosks; "
                "the old paper passes were withdrawn when the Tide card arrived.",
            ),
            (
                1,
                "000",
                "The cheapest way to cross the river on foot is the Mill Bridge, a pedestrian "
                "crossing that saves commuters from Eastgate about ten minutes.",
            ),
        ],
    ),
    (
        "q02",
        "How does fare capping work with the Tide card and with a bank card?",
        [
            "What is the daily cap?",
            "Is there a weekly cap?",
            "Do contactless bank cards get the same cap?",
        ],
        "Pay-as-you-go fares stop at 6.50 euros a day and 26 euros from Monday to Sunday. "
        "Contactless bank cards and phones get the same daily and weekly caps since 2023, as "
        "long as the rider taps the same card every time.",
        "Pay-as-you-go fares on the Tide card stop at 6.50 euros a day and 26 euros from "
        "Monday to Sunday; since 2023 contactless bank cards and phones get the same "
        "daily and weekly caps as long as the rider taps the same card every time.",
        1,
        "555",
        [
            ("@daily-cap", 4, "500"),
            (
                5,
                "550",
                "Fare capping means you never pay more than a pass would cost. The Tide card adds "
                "up your taps: after 6.50 euros in a day, or 26 euros between Monday and Sunday, "
                "further rides that day or week are free.",
            ),
            (
                5,
                "005",
                "Since March 2023 riders can tap a contactless bank card or phone on tram and bus "
                "readers instead of a Tide card. The same daily and weekly limits apply, provided "
                "the same card or device is used for every journey.",
            ),
            (
                4,
                "050",
                "Weekly capping runs from Monday 04:00 to the following Monday 04:00. Journeys "
                "after midnight on a Sunday night bus therefore still count toward the old week.",
            ),
            (
                3,
                "003",
                "Readers on trams are at every door; on buses they are next to the driver. A "
                "green light and one beep confirm the tap; a red light means the card was refused.",
            ),
            (
                2,
                "000",
                "A Tide card costs 5 euros and can be bought at ticket machines, kiosks and the "
                "Central Station service desk. The deposit is refunded when the card is returned.",
            ),
            (
                1,
                "400",
                "Capping on the regional trains operated by NorthRail stops at 12 euros a day, and "
                "those trains do not accept the Tide card at all.",
            ),
            (
                1,
                "000",
                "The speed cap on trams in the pedestrian zone of Old Town is 15 kilometres per "
                "hour, set after two collisions with cyclists in 2017.",
            ),
        ],
    ),
    (
        "q03",
        "What discounts can students and young people get?",
        [
            "What do children and teenagers pay?",
            "What is the Campus pass and who can get it?",
            "How do you prove eligibility?",
        ],
        "Riders under 19 pay half fare on singles and passes. University and vocational "
        "students up to 27 can buy the Campus pass at 35 euros a month, valid in all zones. "
        "Eligibility is checked once a semester with a student ID uploaded in the VTA Go app.",
        "Riders under 19 pay half fare; university and vocational students up to 27 can "
        "buy the Campus pass at 53 euros a month, valid only in zones A and B; "
        "eligibility is checked once a year with a student ID uploaded in the VTA Go app.",
        0,
        "524",
        [
            (
                5,
                "500",
                "Children under 6 travel free, and young people aged 6 to 18 pay half the adult "
                "fare on single tickets, day passes and monthly passes alike.",
                "youth-fares",
            ),
            (
                5,
                "054",
                "The Campus pass costs 35 euros per month and is valid in zones A, B and C. It is "
                "open to students enrolled at the university, the art academy or a vocational "
                "college, up to the age of 27.",
            ),
            (
                4,
                "045",
                "Learners at Vellmar's colleges qualify for reduced monthly travel. To get it, "
                "upload your current enrolment certificate or student card in VTA Go; the "
                "discount is checked again at the start of every semester.",
            ),
            (
                3,
                "300",
                "Teenagers on school trips travel in groups of ten or more at a group rate of 1 "
                "euro per person, booked at least two days in advance by the school.",
            ),
            (
                3,
                "030",
                "About 21,000 Campus passes were sold in 2024, most of them to students living "
                "along tram Line 2 to University Hill.",
            ),
            (
                1,
                "030",
                "The university's own shuttle bus between the campus and the science park is free "
                "for staff only and is not part of the VTA network.",
            ),
            (
                1,
                "000",
                "Student discounts at the Harbourfront museums are 50 percent with a valid card; "
                "the museums are a short walk from tram stop Quayside.",
            ),
            (
                2,
                "000",
                "Exam weeks bring crowded trams on Line 2 in the mornings; VTA adds four extra "
                "trips between 07:30 and 08:30 in January and June.",
            ),
        ],
    ),
    (
        "q04",
        "How can an older resident travel for free or more cheaply?",
        [
            "From what age do seniors ride free?",
            "At what times is free travel valid?",
            "How does a senior get the pass?",
        ],
        "Residents aged 65 and over travel free on weekdays after 09:30 and all day at weekends "
        "with a Senior Tide card; before 09:30 on weekdays they pay a reduced fare of 1.05 euros. "
        "The card is issued free at the Central Station service desk with proof of age and "
        "address.",
        "Seniors ride free after 09:30 on weekdays with a Senior Tide card, which you get free "
        "at Central Station with proof of age and address.",
        1,
        "455",
        [
            (
                5,
                "550",
                "Vellmar residents aged 65 or older ride free on all VTA services after 09:30 on "
                "weekdays and all day on Saturdays, Sundays and public holidays.",
            ),
            (
                5,
                "005",
                "The Senior Tide card is issued free of charge at the Central Station service desk. "
                "Bring an identity document showing your date of birth and proof of a Vellmar "
                "address; the card is printed on the spot.",
            ),
            (
                4,
                "050",
                "In the morning peak, pensioners are not exempt: before half past nine on working "
                "days a reduced single fare of 1.05 euros is charged to the senior card.",
            ),
            (
                3,
                "300",
                "Visitors over 65 who do not live in Vellmar pay the normal adult fare; the free "
                "travel scheme is funded by the city for its own residents.",
            ),
            (
                2,
                "000",
                "Priority seats near the doors are marked in blue and must be offered to older "
                "passengers, pregnant riders and people with reduced mobility.",
            ),
            (
                1,
                "500",
                "NorthRail regional trains offer a 30 percent discount to travellers over 60 with "
                "its Silver railcard, which costs 45 euros a year.",
            ),
            (
                1,
                "000",
                "The retirement of the last Tatra trams in 2004 ended an era; two of the old cars "
                "are kept at the Harbour depot for heritage rides.",
            ),
        ],
    ),
    (
        "q05",
        "How accessible are trams and tram stops for wheelchair users?",
        [
            "Are the trams low-floor?",
            "Are all tram stops step-free?",
            "How are lift outages reported?",
            "Do wheelchair users need to book assistance?",
        ],
        "All trams are low-floor with a level boarding ramp at the second door. 52 of the 60 "
        "tram stops are step-free; the eight others, mostly on Line 1's old section, are being "
        "rebuilt by 2027. Lift outages are shown live in VTA Go and on stop displays. No booking "
        "is needed; drivers deploy the ramp on request.",
        "The trams are low-floor and most stops are step-free, but some on Line 1 are not yet. "
        "Lift outages appear in the app.",
        1,
        "4450",
        [
            (
                5,
                "5500",
                "Every tram in the VTA fleet is low-floor. A manual ramp at the second door bridges "
                "the remaining gap, and 52 of the 60 tram stops offer step-free access from the "
                "street to the platform.",
            ),
            (
                5,
                "0450",
                "Eight older stops on the Line 1 section between Harbourfront and Mill Street still "
                "have steps or steep slopes. They will be rebuilt with raised platforms and lifts "
                "between 2025 and 2027.",
            ),
            (
                4,
                "0050",
                "When a lift at an underground stop breaks down, the fault appears within minutes in "
                "the VTA Go app and on the departure displays, with the nearest step-free "
                "alternative.",
            ),
            (
                4,
                "4005",
                "Wheelchair users do not need to book ahead. Press the blue button by the second "
                "door and the driver will unfold the ramp; tram drivers are trained to wait until "
                "the passenger is secured.",
            ),
            (
                3,
                "0000",
                "Audio announcements name every stop, and the stop displays in trams show the next "
                "three stops in large type for riders with low vision.",
            ),
            (
                2,
                "0000",
                "Tactile paving guides blind passengers from the platform edge to the ticket "
                "machines at all newer tram stops.",
            ),
            (
                1,
                "3000",
                "The Castle Hill funicular has no step-free access at its lower station; a "
                "wheelchair lift is planned but not yet funded.",
            ),
            (
                1,
                "0000",
                "The Low Floor Jazz Festival takes place on the square in front of Central Station "
                "every August and draws crowds to the tram stops nearby.",
            ),
        ],
    ),
    (
        "q06",
        "How can I get home late at night on a weekend?",
        [
            "Which night buses run and how often?",
            "Do any trams run all night?",
            "Is there extra fare for night services?",
        ],
        "On Friday and Saturday nights the night buses N1 to N6 run every 30 minutes from "
        "00:30 to 05:00, all leaving from Central Station. Tram Line 1 runs all night on "
        "Saturday nights every 20 minutes. Night services cost the normal fare; passes are "
        "valid.",
        "On Friday and Saturday nights the night buses N1 to N6 run every 30 minutes from"
        " 00:30 to 05:00 from Central Station, tram Line 1 runs all night on Saturday "
        "nights every 20 minutes, and night services cost the normal fare.",
        1,
        "555",
        [
            (
                5,
                "500",
                "Night buses N1 to N6 run every 30 minutes on Friday and Saturday nights between "
                "00:30 and 05:00. All six routes start at Central Station, so it is the place to "
                "change between them.",
                "night-buses",
            ),
            (
                5,
                "050",
                "Saturday nights have a continuous tram service: Line 1 between Harbourfront and "
                "Northfield keeps running through the night, with a tram every 20 minutes until "
                "the first morning departures.",
            ),
            (
                4,
                "005",
                "There is no night surcharge. Singles, day passes and season tickets are all "
                "valid on night buses and on the all-night tram.",
            ),
            (
                3,
                "300",
                "On weeknights the N routes run hourly, and the last regular trams leave Central "
                "Station at 00:15.",
            ),
            (
                4,
                "500",
                "After midnight at weekends, the network thins to six numbered night lines that "
                "fan out from the main station to the suburbs at half-hourly intervals.",
            ),
            (
                2,
                "000",
                "Taxis wait at the rank on the east side of Central Station; the city fixes a "
                "night tariff of 2.40 euros per kilometre after 22:00.",
            ),
            (
                1,
                "300",
                "The N8 night bus in the neighbouring town of Osterby is run by a private company "
                "and does not accept VTA tickets.",
            ),
            (
                1,
                "000",
                "The Night of Museums in October keeps the galleries on Harbourfront open until "
                "2 a.m. with live music.",
            ),
        ],
    ),
    (
        "q07",
        "Can I take my bicycle on trams, buses or the ferry?",
        [
            "When are bikes allowed on trams?",
            "Which buses carry bikes?",
            "What does a bike cost on the ferry?",
        ],
        "Folding bikes go free on every vehicle at any time. Full-size bikes are allowed on "
        "trams outside the peaks (07:00–09:00 and 16:00–18:30 on weekdays) in the marked "
        "area, free of charge. Buses on routes 40 to 49 carry two bikes on a front rack. On the "
        "harbour ferry a bike costs 1 euro.",
        "You can bring a bike on the tram except in rush hour, on buses 40 to 49 with a front "
        "rack, and on the ferry for 1 euro; folding bikes are always allowed.",
        1,
        "545",
        [
            (
                5,
                "500",
                "Full-size bicycles may travel on trams on weekdays before 07:00, between 09:00 and "
                "16:00, and after 18:30, and all day at weekends. Use the area marked with a bike "
                "symbol at the middle doors; there is no charge.",
            ),
            (
                5,
                "050",
                "Buses on routes 40 to 49, which serve the hilly western suburbs, carry a front "
                "rack with space for two bicycles. Riders load and secure the bike themselves.",
            ),
            (
                4,
                "005",
                "A bicycle on the Skerry Island ferry costs 1 euro each way, paid with the Tide "
                "card at the gangway reader.",
            ),
            (
                4,
                "300",
                "Folded bikes count as luggage and can be carried on any bus, tram, ferry or the "
                "funicular at any hour without a ticket for the bike.",
            ),
            (
                3,
                "000",
                "The Velo bike share has 140 docking stations, many next to tram stops, and the "
                "first 30 minutes of each ride are free with a Tide card.",
                "velo",
            ),
            (
                2,
                "000",
                "Secure bike parking with 400 spaces opened at Northfield park and ride in 2022; "
                "access is by Tide card.",
            ),
            (
                1,
                "500",
                "Bicycles are banned from the Castle Hill funicular cabins for safety reasons, "
                "except when folded.",
            ),
            (
                1,
                "000",
                "The annual Vellmar bike race closes the river embankment on the first Sunday of "
                "May, and buses on route 12 are diverted.",
            ),
        ],
    ),
    (
        "q08",
        "How do I get from the city centre to the airport?",
        [
            "Which tram line goes to the airport and how long does it take?",
            "How often does it run?",
            "Is there an airport supplement?",
            "How do I reach the airport at night?",
        ],
        "Tram Line 3 runs from Central Station to the airport in 28 minutes, every 10 minutes "
        "from 05:00 to midnight. Trips to or from the airport stop cost a 3 euro supplement on "
        "top of the zone fare (included in the Visitor pass). At night the X9 express bus runs "
        "hourly from Central Station.",
        "Tram Line 3 runs from Central Station to the airport in 28 minutes, every 20 "
        "minutes from 05:00 to midnight; trips to the airport stop cost no supplement on "
        "top of the zone fare, and at night the X9 express bus runs hourly from Central "
        "Station.",
        0,
        "5105",
        [
            (
                5,
                "5500",
                "Line 3 links Central Station with Vellmar Airport in 28 minutes, via Eastgate and "
                "the business park. Trams run every 10 minutes from 05:00 until midnight.",
                "line3-airport",
            ),
            (
                5,
                "0050",
                "Journeys that start or end at the Airport tram stop carry a supplement of 3 euros "
                "on top of the normal fare. The Visitor pass already includes it.",
            ),
            (
                4,
                "0005",
                "When the trams stop, the X9 airport express bus takes over, leaving Central "
                "Station every hour between midnight and 05:00 and taking about 35 minutes.",
            ),
            (
                4,
                "5000",
                "To fly out of Vellmar without a car, take the purple tram from the main station; "
                "it reaches the terminal in under half an hour.",
            ),
            (
                3,
                "0000",
                "The airport's terminal has a VTA ticket machine in the arrivals hall, next to the "
                "car rental desks, selling Tide cards and Visitor passes.",
            ),
            (
                2,
                "0000",
                "Opened in 2021, Line 3 was the first new tram line in Vellmar since Line 2 in 1999 "
                "and cost 310 million euros.",
            ),
            (
                1,
                "0000",
                "Airport parking costs 22 euros per day in the short-stay garage and 9 euros per day "
                "in the long-stay lot.",
            ),
            (
                1,
                "3000",
                "A shuttle bus once ran from the Hotel Meridian to the airport every 45 minutes, but "
                "the hotel ended the service in 2020.",
            ),
        ],
    ),
]
