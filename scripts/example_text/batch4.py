"""Queries q25–q30: Flex minibuses, snow, match days, Tide card data, night safety,
timetable changes. Format: see batch1."""

CLUSTERS = [
    (
        "q25",
        "How does the on-demand Flex minibus in the outer villages work?",
        [
            "Where does Flex operate?",
            "How do you book a ride?",
            "What does it cost?",
        ],
        "VTA Flex serves the zone C villages north and east of the city, where regular buses "
        "run rarely. Rides are booked in VTA Go or by phone at least 30 minutes ahead, from "
        "06:00 to 22:00, between any two virtual stops. The normal zone fare applies, and "
        "passes are valid.",
        "Flex minibuses drive in the outer villages; you book 30 minutes ahead in the app or by "
        "phone and pay the normal fare.",
        1,
        "555",
        [
            (
                5,
                "500",
                "VTA Flex is an on-demand minibus service for the villages of zone C north and east "
                "of Vellmar, such as Brekka, Holm and Sandvik, where fixed bus routes ran only a few "
                "times a day.",
            ),
            (
                5,
                "055",
                "Book a Flex ride in VTA Go or on 0800 7789 at least 30 minutes before you want to "
                "travel, between 06:00 and 22:00. Normal zone fares apply and passes are valid.",
            ),
            (
                4,
                "050",
                "Riders pick a virtual stop from a map in the app; the minibus collects several "
                "passengers going the same way, so the trip can take longer than a direct drive.",
            ),
            (
                3,
                "500",
                "Flex connects the villages with the tram terminus at Northfield and the Eastgate "
                "park and ride, where riders change to trams.",
            ),
            (
                2,
                "000",
                "The eight Flex minibuses are electric and seat nine passengers, one space adapted "
                "for a wheelchair.",
            ),
            (1, "005", "Flexible working hours for VTA office staff were introduced in 2021."),
            (
                1,
                "000",
                "Taxi sharing apps operate in the city centre but are not licensed in the "
                "villages of zone C.",
            ),
        ],
    ),
    (
        "q26",
        "What happens to tram and bus services in heavy snow?",
        [
            "What is the Winter plan?",
            "How are trams kept running?",
            "How do riders find out about changes?",
        ],
        "When more than 10 cm of snow is forecast, VTA switches to its Winter plan: steep bus "
        "routes on the hills are cut back or diverted, and other buses run a Saturday timetable. "
        "De-icing trams run overnight to keep wires and tracks clear, and points are heated. "
        "Changes are published in VTA Go and on stop displays by 05:00.",
        "In heavy snow VTA runs a Winter plan with fewer buses; trams keep going with de-icing "
        "trams at night, and changes are in the app.",
        1,
        "455",
        [
            (
                5,
                "500",
                "The Winter plan starts when more than 10 centimetres of snow are forecast. Bus "
                "routes on steep streets in Westhill and Castle Hill are shortened or diverted, and "
                "the rest of the bus network runs a Saturday timetable.",
            ),
            (
                5,
                "050",
                "Special de-icing trams run through the night in snowy weather to keep overhead "
                "wires and rails free of ice, and heated points stop switches from freezing.",
            ),
            (
                4,
                "005",
                "On snowy mornings the day's service changes are published in VTA Go and on stop "
                "displays before 05:00, and drivers announce diversions on board.",
            ),
            (
                3,
                "300",
                "Buses are fitted with winter tyres from November to March; they carry snow chains "
                "for the steepest routes.",
            ),
            (
                2,
                "000",
                "The heaviest snowfall on record, 48 centimetres in February 1987, stopped the "
                "city's buses for three days.",
            ),
            (
                1,
                "500",
                "Snow clearing on pavements is the duty of property owners, and the city's "
                "gritting trucks clear main roads first.",
            ),
            (
                1,
                "000",
                "Snow Queen, the Christmas ballet at the Vellmar Opera, runs every December.",
            ),
        ],
    ),
    (
        "q27",
        "How do extra services work on football match days and big events?",
        [
            "What extra trams run to the stadium?",
            "Is travel included in event tickets?",
            "What special service runs on New Year's Eve?",
        ],
        "On home match days extra trams run on Line 2 to Stadium stop every 3 minutes from two "
        "hours before kick-off until an hour after the final whistle. Match and concert tickets "
        "include travel in zones A and B on the day. On New Year's Eve all VTA services are "
        "free from 18:00 to 06:00 and trams run all night.",
        "On match days there are extra trams to the stadium and your match ticket is valid for "
        "travel; on New Year's Eve public transport is free all night.",
        1,
        "455",
        [
            (
                5,
                "500",
                "For home matches of FC Vellmar, extra trams run on Line 2 to the Stadium stop "
                "every 3 minutes, from two hours before kick-off until an hour after the final "
                "whistle.",
            ),
            (
                5,
                "050",
                "Tickets for football matches and concerts at Vellmar Stadium include free travel "
                "in zones A and B on the day of the event; show the ticket if asked.",
            ),
            (
                4,
                "005",
                "On New Year's Eve the whole VTA network is free from 18:00 until 06:00, and trams "
                "on all lines run through the night.",
            ),
            (
                3,
                "400",
                "After big concerts, crowd stewards direct fans to Stadium, Parkway and "
                "University Hill stops to spread the load.",
            ),
            (2, "000", "Vellmar Stadium holds 28,000 spectators and was rebuilt in 2016."),
            (
                1,
                "000",
                "Match-day parking around the stadium is restricted to residents with permits; "
                "illegally parked cars are towed.",
            ),
            (
                1,
                "500",
                "FC Vellmar's team bus is sponsored by a local brewery and painted in the club's "
                "green and white.",
            ),
        ],
    ),
    (
        "q28",
        "What data does the Tide card store about my journeys?",
        [
            "What journey data is recorded?",
            "How long is it kept?",
            "Can I travel anonymously?",
        ],
        "A registered Tide card records each tap: time, stop and vehicle, and the fare charged. "
        "VTA keeps this journey history for 12 months and then deletes it; aggregated, "
        "anonymised counts are kept for planning. An anonymous Tide card, bought with cash and "
        "not registered, stores only its balance, but cannot be blocked or refunded if lost.",
        "A registered Tide card records each tap, with time, stop, vehicle and the fare "
        "charged; VTA keeps this journey history for 12 months and then deletes it, "
        "keeping only anonymised counts for planning, and an anonymous Tide card bought "
        "with cash and not registered stores only its balance but cannot be blocked or "
        "refunded if lost.",
        1,
        "555",
        [
            (
                5,
                "550",
                "For registered Tide cards, VTA stores each tap with its time, stop, vehicle and the "
                "fare charged. The journey history is kept for 12 months and then deleted; only "
                "anonymised passenger counts are kept longer.",
            ),
            (
                5,
                "005",
                "An anonymous Tide card can be bought with cash at kiosks and is never linked to a "
                "name. It holds a balance and passes, but a lost anonymous card cannot be blocked "
                "or replaced.",
            ),
            (
                4,
                "500",
                "Your travel history, including where and when you tapped in, is visible in VTA Go "
                "and can be downloaded as a file.",
            ),
            (
                3,
                "030",
                "Riders can ask VTA's data protection officer for a copy of all personal data held "
                "about them, or for its deletion, under the GDPR.",
            ),
            (
                2,
                "000",
                "Passenger counts from Tide card taps helped VTA add trips on Line 2 where trams "
                "were full at 08:00.",
            ),
            (
                1,
                "500",
                "Bank cards used for contactless fares are processed by the payment provider; VTA "
                "never sees the full card number.",
            ),
            (
                1,
                "000",
                "The Tide is Vellmar's local newspaper, published every morning since 1868.",
            ),
        ],
    ),
    (
        "q29",
        "How safe is it to travel alone at night, and what help is available?",
        [
            "Can buses stop between stops at night?",
            "How do you call for help on board or at a stop?",
            "Are vehicles and stops monitored?",
        ],
        "After 22:00, riders can ask the bus driver to stop anywhere on the route between two "
        "stops (the Safe Stop scheme). Every tram and bus has a red help button that connects to "
        "the control centre, and all tram stops have help points. Vehicles and tram stops are "
        "covered by CCTV, and security staff ride the night buses at weekends.",
        "At night you can ask the bus to stop between stops. There are help buttons, and the "
        "vehicles have cameras.",
        1,
        "545",
        [
            (
                5,
                "500",
                "Safe Stop: after 22:00, any passenger may ask the bus driver to let them off "
                "between two regular stops, as close as is safe to their destination.",
            ),
            (
                5,
                "055",
                "Each tram and bus has a red help button by the doors that opens a voice link with "
                "the control centre, and every tram stop has a help point. All vehicles and tram "
                "stops are watched by CCTV.",
            ),
            (
                4,
                "005",
                "Security teams ride the night buses on Friday and Saturday nights and patrol "
                "Central Station until the last departure.",
            ),
            ("@night-buses", 2, "000"),
            (
                3,
                "500",
                "Riders travelling home late can wait in the lit, staffed waiting room at Central "
                "Station, open until 02:00 at weekends.",
            ),
            (
                2,
                "000",
                "Reported incidents on VTA vehicles fell by 18 percent between 2019 and 2024.",
            ),
            (
                1,
                "050",
                "The fire alarm test at VTA headquarters takes place on the first Monday of every "
                "month at 11:00.",
            ),
            (
                1,
                "000",
                "Street lighting in the Old Town was switched to LED lamps in 2020, which brighter "
                "streets at night made popular with residents.",
            ),
        ],
    ),
    (
        "q30",
        "When do timetables change and how are riders told?",
        [
            "When do timetable changes happen?",
            "How are riders informed?",
            "Can riders comment on changes?",
        ],
        "Timetables change twice a year, on the second Sunday of June and of December. New "
        "timetables are published in VTA Go and on posters at stops four weeks ahead. Major "
        "route changes go through a public consultation of six weeks, with comments by online "
        "form or at drop-in sessions.",
        "Timetables change once a year in September, and new timetables are only "
        "published on the VTA website.",
        0,
        "000",
        [
            (
                5,
                "500",
                "VTA changes its timetables twice a year, on the second Sunday of June and the "
                "second Sunday of December.",
            ),
            (
                5,
                "055",
                "New timetables appear in VTA Go and on posters at every stop four weeks before "
                "they start. Major route changes are first put to a six-week public consultation, "
                "with an online form and drop-in sessions in libraries.",
            ),
            (
                4,
                "050",
                "Riders learn about the winter schedule a month in advance from the app and the "
                "notices at their stop.",
            ),
            (
                3,
                "500",
                "The December change in 2024 added a 5-minute service on Line 3 in the morning and "
                "cut bus route 17 at weekends.",
            ),
            (
                2,
                "000",
                "Printed timetable booklets were discontinued in 2020; a single page per route can "
                "be printed from VTA Go.",
            ),
            (
                1,
                "500",
                "The clocks change to summer time on the last Sunday of March; night buses run to "
                "the clock, so one trip is skipped.",
            ),
            (1, "000", "The Vellmar Chamber Orchestra publishes its season programme in June."),
        ],
    ),
]
