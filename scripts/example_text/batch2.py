"""Queries q09–q16: inspections, lost property, ferry, Line 4, electric buses, park and ride,
real-time information, strikes. Format: see batch1."""

CLUSTERS = [
    (
        "q09",
        "What happens if a ticket inspector finds me without a valid ticket?",
        [
            "How large is the penalty fare?",
            "Can the penalty be reduced?",
            "What if I have a pass but forgot it?",
        ],
        "The penalty fare is 70 euros. Paid within 14 days it is reduced to 35 euros. A rider "
        "who holds a personal pass but forgot it can show it at a service desk within 7 days "
        "and pays only a 10 euro handling fee.",
        "The penalty fare is 70 euros, reduced to 35 euros when paid within 14 days; a "
        "rider who holds a personal pass but forgot it can show it at a service desk "
        "within 7 days and pays only a 10 euro handling fee.",
        1,
        "555",
        [
            (
                5,
                "550",
                "Passengers found without a valid ticket pay a penalty fare of 70 euros. If the "
                "penalty is paid within 14 days, online or at a service desk, it is reduced to 35 "
                "euros.",
            ),
            (
                5,
                "005",
                "Forgot your season ticket at home? Present the personal pass at any VTA service "
                "desk within seven days of the check and the penalty is cancelled; a handling fee "
                "of 10 euros remains.",
            ),
            (
                4,
                "500",
                "Fare evasion is costly: riders caught travelling without paying are charged "
                "seventy euros on the spot or by invoice.",
            ),
            (
                3,
                "000",
                "Inspectors wear a blue VTA badge with a photo and a number. They may ask for an "
                "identity document when a penalty fare is issued.",
            ),
            (
                3,
                "030",
                "Repeat offenders caught three times within a year are reported to the police, and "
                "the reduced rate for quick payment no longer applies to them.",
            ),
            (
                2,
                "000",
                "About 2.8 percent of riders checked in 2024 had no valid ticket, down from 4.1 "
                "percent in 2019.",
            ),
            (
                1,
                "500",
                "Parking fines in the city centre are 70 euros for overstaying a meter; they are "
                "issued by the municipal parking service, not by VTA.",
            ),
            (
                1,
                "000",
                "Ticket machines at tram stops accept coins, bank cards and phones, but not notes "
                "above 20 euros.",
            ),
        ],
    ),
    (
        "q10",
        "What should I do if I lose something on a bus or tram?",
        [
            "Where is the lost property office?",
            "How long are items kept?",
            "How do I report a lost item and is there a fee?",
        ],
        "Found items go to the lost property office at Central Station (open weekdays 09:00–"
        "17:00) after one day at the depot. Items are kept for 60 days. Report a loss with the "
        "online form in VTA Go; collecting an item costs a 5 euro handling fee, waived for "
        "identity documents.",
        "Go to the lost property office at Central Station; items are kept for 60 days and you "
        "can report them online, paying 5 euros when you collect.",
        1,
        "555",
        [
            (
                5,
                "500",
                "VTA's lost property office is in the west hall of Central Station and is open "
                "from 09:00 to 17:00 on weekdays. Items reach it the day after they were found "
                "on a vehicle.",
            ),
            (
                5,
                "055",
                "Found objects are stored for 60 days. Owners can describe a lost item in the "
                "online form of VTA Go and are notified when a match is found. Collection costs "
                "a 5 euro handling fee, except for passports and identity cards.",
            ),
            (
                4,
                "040",
                "Anything left on a tram or bus spends its first night at the depot where the "
                "vehicle ends its shift, and after two months unclaimed goods are auctioned for "
                "charity.",
            ),
            (
                3,
                "005",
                "Call the customer line on 0800 7788 if you left something on a vehicle in the "
                "last hour: the control centre can sometimes ask the driver to look at the end of "
                "the line.",
            ),
            (
                2,
                "000",
                "Umbrellas, gloves and phone chargers are the objects most often left on trams; "
                "about 14,000 items were handed in during 2024.",
            ),
            (
                1,
                "000",
                "Lost Tide cards can be blocked in VTA Go and replaced for 5 euros, with the "
                "remaining balance and passes moved to the new card.",
            ),
            (
                1,
                "500",
                "The airport's lost and found desk is in the arrivals hall and handles items "
                "left in the terminal or on planes; it is run by the airport company.",
            ),
        ],
    ),
    (
        "q11",
        "When does the harbour ferry to Skerry Island run, and how reliable is it?",
        [
            "How often does the ferry run in summer and in winter?",
            "When is the ferry cancelled?",
            "How long is the crossing?",
        ],
        "Ferry F1 leaves Harbourfront every 20 minutes from May to September and every 40 "
        "minutes in winter, from 06:00 to 23:00. The crossing takes 12 minutes. Sailings are "
        "cancelled when wind exceeds 45 knots or in dense fog; cancellations are shown in VTA "
        "Go. Over 98 percent of sailings ran in 2024.",
        "The ferry runs every 20 minutes in summer and every 40 minutes in winter and is "
        "cancelled in storms, when the wind is over 45 knots.",
        1,
        "550",
        [
            (
                5,
                "505",
                "Ferry F1 sails from the Harbourfront pier to Skerry Island every 20 minutes "
                "between May and September and every 40 minutes from October to April, from 06:00 "
                "to 23:00. The crossing takes 12 minutes.",
            ),
            (
                5,
                "050",
                "Sailings are suspended when the wind at the harbour mouth exceeds 45 knots or when "
                "fog reduces visibility below 200 metres. Cancellations appear in VTA Go and on "
                "the pier displays.",
            ),
            (
                4,
                "040",
                "The island boat is dependable: in 2024, 98.4 percent of scheduled crossings took "
                "place, and most losses came from three autumn storms.",
            ),
            (
                3,
                "000",
                "The two ferries, Marta and Skerry Star, carry 180 passengers each and were "
                "converted to battery-electric drive in 2022.",
            ),
            (
                3,
                "500",
                "Summer weekends bring queues at the pier; on sunny Sundays an extra boat runs "
                "every 10 minutes between 10:00 and 18:00.",
            ),
            (
                2,
                "000",
                "Skerry Island has a sandy beach, a lighthouse open to visitors and two cafés near "
                "the landing stage.",
            ),
            (
                1,
                "500",
                "A private car ferry to Osterby leaves the industrial port four times a day; it is "
                "not part of VTA and does not accept the Tide card.",
            ),
        ],
    ),
    (
        "q12",
        "What is the Line 4 tram project and how will construction affect Quay Street?",
        [
            "Where will Line 4 run?",
            "When will it open and what does it cost?",
            "What disruption will Quay Street see?",
        ],
        "Line 4 will run 7.5 km from Central Station over the new Southbank bridge to the "
        "Southbank district and the hospital. Opening is planned for 2028 at a cost of 640 "
        "million euros. Quay Street is closed to cars between 2025 and 2027 while tracks are "
        "laid; buses 21 and 22 are diverted over Mill Street and shops stay open to "
        "pedestrians.",
        "Line 4 goes to Southbank and opens in 2028. Quay Street will be closed for some time.",
        0,
        "434",
        [
            (
                5,
                "550",
                "Line 4 is a 7.5 kilometre tram line from Central Station across a new bridge to the "
                "Southbank district and the University Hospital. It is scheduled to open in 2028 "
                "and is budgeted at 640 million euros.",
            ),
            (
                5,
                "005",
                "From spring 2025 until late 2027 Quay Street will be closed to motor traffic for "
                "track laying. Bus routes 21 and 22 are diverted via Mill Street; pavements and "
                "shop entrances remain open.",
            ),
            (
                4,
                "400",
                "The southern tram extension will have eleven stops, among them Southbank Market, "
                "the hospital and the new housing area at Riverside Docks.",
            ),
            (
                3,
                "004",
                "Night work on the Quay Street tracks is limited to two weeks per year, and "
                "residents receive a letter before each phase.",
            ),
            (
                3,
                "030",
                "The city council approved the financing of the southern line in 2023: 60 percent "
                "from the national government, the rest from the city and VTA borrowing.",
                "line4-funding",
            ),
            (
                2,
                "000",
                "Construction sites in Vellmar must keep noise below 70 decibels between 07:00 and "
                "19:00, under the city's building code.",
            ),
            (
                1,
                "005",
                "Quay Street was pedestrianised for the Harbour Festival in 2019 and again for the "
                "Tall Ships visit, drawing 300,000 visitors.",
            ),
            (
                1,
                "400",
                "A fourth metro line was once proposed for Vellmar in the 1970s but was cancelled "
                "for lack of money; only a short tunnel stub was built.",
            ),
        ],
    ),
    (
        "q13",
        "How far has Vellmar got in replacing diesel buses with electric ones?",
        [
            "How many buses are electric today?",
            "What is the target date for a fully electric fleet?",
            "How are the electric buses charged?",
        ],
        "120 of VTA's 310 buses were battery-electric at the end of 2024. The whole fleet is to "
        "be zero-emission by 2030. The buses charge overnight at the Harbour and Northfield "
        "depots, with fast chargers at four route terminals; a hydrogen trial ended in 2021.",
        "About 120 of 310 buses are electric and the fleet will be fully electric by 2030. The "
        "buses charge at the depots at night.",
        1,
        "555",
        [
            (
                5,
                "550",
                "At the end of 2024, 120 of VTA's 310 buses ran on batteries. Every new bus bought "
                "since 2022 is electric, and the last diesel buses are due to retire in 2030.",
            ),
            (
                5,
                "005",
                "Electric buses charge overnight at the Harbour and Northfield depots. Four route "
                "terminals, including Eastgate and Westhill, have pantograph fast chargers for "
                "top-ups during the day.",
            ),
            (
                4,
                "400",
                "Almost two in five city buses are now battery powered, and the share rises every "
                "year as diesels reach the end of their life.",
            ),
            (
                3,
                "050",
                "A zero-emission bus fleet by the end of the decade is part of Vellmar's climate "
                "plan, together with a ban on diesel delivery vans in Old Town.",
            ),
            (
                2,
                "000",
                "Two hydrogen buses were tested on route 30 from 2019 to 2021; the trial ended "
                "because fuel deliveries were unreliable and costly.",
            ),
            (
                2,
                "000",
                "The trams have always been electric; since 2018 they run on electricity bought "
                "from wind farms on the coast.",
            ),
            (
                1,
                "500",
                "Electric scooters for hire were banned from the city centre in 2023 after "
                "complaints about scooters blocking pavements.",
            ),
            (
                1,
                "000",
                "The first motor bus in Vellmar ran in 1924 between the station and the market "
                "square, replacing a horse omnibus.",
            ),
        ],
    ),
    (
        "q14",
        "Where can I park my car and continue by public transport?",
        [
            "Where are the park and ride sites?",
            "What does parking cost?",
            "Which is the largest site?",
        ],
        "VTA runs five park and ride sites: Northfield, Eastgate, Westhill, Airport South and "
        "Riverside. Parking is free for holders of a valid VTA ticket or pass for that day, "
        "otherwise 8 euros a day. Northfield, at the end of tram Line 1, is the largest with "
        "900 spaces.",
        "VTA runs five park and ride sites, Northfield, Eastgate, Westhill, Airport South"
        " and Riverside; parking is free with a valid VTA ticket or pass for that day, "
        "otherwise 8 euros a day, and Northfield at the end of tram Line 1 is the largest"
        " with 900 spaces.",
        1,
        "555",
        [
            (
                5,
                "505",
                "There are five park and ride sites at the edge of the city: Northfield (900 "
                "spaces, tram Line 1), Eastgate (450, Line 3), Westhill (300, bus 40), Airport "
                "South (250, Line 3) and Riverside (200, bus 22).",
            ),
            (
                5,
                "050",
                "Parking at a park and ride site is free if you show a valid VTA ticket or pass for "
                "that day when leaving; without one the barrier charges 8 euros a day.",
            ),
            (
                4,
                "005",
                "The biggest car park on the network is at Northfield, the northern terminus of "
                "Line 1, where trams leave every 6 minutes for the city centre.",
            ),
            (
                3,
                "500",
                "Drivers coming from the coast road can leave the car at Westhill and take bus 40, "
                "which reaches Old Town in 18 minutes.",
            ),
            (
                2,
                "000",
                "Electric car chargers were installed at Northfield and Eastgate in 2023; charging "
                "is billed separately by the energy company.",
            ),
            (
                1,
                "050",
                "Street parking in zone 1 of the city centre costs 3.50 euros per hour and is "
                "limited to two hours.",
            ),
            (
                1,
                "500",
                "The Central Station multi-storey car park has 600 spaces and is privately run; "
                "VTA tickets give no discount there.",
            ),
        ],
    ),
    (
        "q15",
        "How can I see real-time departures?",
        [
            "Does the app show live departures?",
            "Can I get departures by SMS?",
            "Do stops have displays?",
        ],
        "The VTA Go app shows live departures and disruptions from the vehicles' GPS. Texting "
        "the four-digit stop code to 7788 returns the next departures by SMS. All tram stops and "
        "the 200 busiest bus stops have live displays.",
        "Use the VTA Go app for live times, text the stop code to 7788, or look at the displays "
        "at tram stops and big bus stops.",
        1,
        "555",
        [
            (
                5,
                "500",
                "VTA Go shows real-time departures for every stop, based on GPS positions sent by "
                "each tram, bus and ferry every ten seconds, together with disruptions and "
                "diversions.",
                "vta-go",
            ),
            (
                5,
                "050",
                "No smartphone? Send the four-digit code printed on the stop sign to 7788 and you "
                "will receive the next four departures by text message at the normal SMS price.",
            ),
            (
                4,
                "005",
                "Live displays are fitted at all 60 tram stops and at the 200 busiest bus stops; "
                "the rest show printed timetables.",
            ),
            (
                3,
                "400",
                "Open data: VTA publishes its timetables and live vehicle positions in the GTFS "
                "and GTFS Realtime formats, used by journey planners and map apps.",
            ),
            (
                2,
                "000",
                "Timetables printed at stops are updated twice a year when the schedule changes, "
                "in June and December.",
            ),
            (
                1,
                "500",
                "The city's parking app shows free spaces in real time for the five public garages "
                "in the centre.",
            ),
            (
                1,
                "000",
                "Departure boards at Central Station list regional NorthRail trains as well as "
                "long-distance services.",
            ),
        ],
    ),
    (
        "q16",
        "What service can I expect during a transit strike?",
        [
            "What minimum service is guaranteed?",
            "How much notice is given before a strike?",
            "Are passes refunded for strike days?",
        ],
        "Vellmar's minimum service agreement guarantees at least half of the normal trams and "
        "buses in the morning and evening peaks during a strike. Unions must announce a strike "
        "five days ahead, and VTA publishes the reduced timetable 24 hours before. Monthly and "
        "annual pass holders get a credit of one day for each full strike day.",
        "Vellmar's minimum service agreement guarantees at least a quarter of the normal "
        "trams and buses in the morning and evening peaks during a strike; unions must "
        "announce a strike two days ahead, VTA publishes the reduced timetable 24 hours "
        "before, and monthly and annual pass holders get no credit for strike days.",
        0,
        "130",
        [
            (
                5,
                "550",
                "Under the minimum service agreement signed in 2018, at least 50 percent of trams "
                "and buses must run during the morning and evening peaks on strike days. Unions "
                "must give five days' notice of industrial action.",
            ),
            (
                5,
                "005",
                "Holders of monthly and annual passes receive one day of credit on their Tide card "
                "for every full day of strike action, applied automatically.",
            ),
            (
                4,
                "040",
                "VTA publishes a reduced strike timetable in VTA Go at least 24 hours before a "
                "walkout, with the routes that will run and their frequencies.",
            ),
            (
                3,
                "300",
                "Outside the peaks, strike-day services can drop to a skeleton network focused on "
                "tram lines 1 and 3 and the hospital routes.",
            ),
            (
                2,
                "000",
                "The last strike at VTA lasted two days in November 2023, over pay for bus drivers.",
            ),
            (
                1,
                "500",
                "A pilots' strike in 2022 grounded most flights at Vellmar Airport for three days.",
            ),
            (
                1,
                "050",
                "Strikes of NorthRail train drivers are announced 48 hours ahead; VTA does not "
                "replace cancelled trains.",
            ),
        ],
    ),
]
