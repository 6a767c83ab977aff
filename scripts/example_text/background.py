"""Background passages about the same fictional transit system that answer none of the
queries; in a query's pool they take the default grade (see make_example_data.py)."""

PASSAGES = [
    "Vellmar Transit Authority (VTA) was founded in 1921 when the city bought the tram company. "
    "It is owned by the city and run by a board of nine members, five of them city councillors.",
    "VTA employs about 2,900 people: 1,400 bus drivers, 520 tram drivers, 38 ferry crew and the "
    "staff of three depots, the control centre and the head office on Canal Road.",
    "In 2024 the network carried 118 million passenger journeys, 61 percent of them on the "
    "three tram lines and 37 percent on buses.",
    "Line 1 runs 11 kilometres from Harbourfront to Northfield with 22 stops. It is the busiest "
    "line, with trams every 6 minutes during the day.",
    "Line 2 connects Old Town with University Hill in 19 minutes. Its steepest section climbs "
    "past the botanical garden at a gradient of 7 percent.",
    "The tram fleet consists of 64 Aurora trams built in 1999–2021, each 36 metres long with "
    "room for 230 passengers.",
    "Twelve new tram cars for Line 4 were ordered in 2024 from a manufacturer in the north of "
    "the country; the first will arrive for testing in 2027.",
    "The Harbour depot, built in 1902 for the first electric trams, still houses 30 trams and "
    "the central workshop where cars are overhauled every eight years.",
    "Northfield depot opened in 2012 and stores 150 buses. Its roof carries 4,000 square metres "
    "of solar panels.",
    "The control centre on Canal Road watches every vehicle on a wall of screens and can hold a "
    "tram so that passengers from a late bus can make the connection.",
    "Bus route 10 is the main east–west route, running from Westhill to Eastgate along Ring "
    "Road every 8 minutes.",
    "Route 17 serves the old industrial district of Kettle Yard, now a neighbourhood of studios "
    "and small breweries.",
    "Routes 21 and 22 run along the river to Riverside and Southbank and are among the busiest "
    "bus routes, with articulated buses every 5 minutes.",
    "Route 30 links the university campus with the science park and the technology college.",
    "Route 33 is known as the hospital route, passing three clinics and the University Hospital.",
    "School routes S1 to S9 run only on school days and are timed to the start and end of "
    "lessons at the larger secondary schools.",
    "The express routes X1 to X4 stop only at major interchanges and use the bus lanes on the "
    "northern motorway.",
    "Central Station is the hub of the network, where all three tram lines, 19 bus routes and "
    "the regional trains meet.",
    "The station's main hall was rebuilt in 2015 with a glass roof and a market with food "
    "stalls on the lower level.",
    "Harbourfront stop sits next to the ferry pier, the maritime museum and the fish market "
    "that opens at 06:00 on Saturdays.",
    "Market Square stop is the heart of Old Town; trams there run at walking pace through the "
    "pedestrian area.",
    "University Hill is the terminus of Line 2, with a turning loop around a small park in front "
    "of the main university building.",
    "The Eastgate interchange combines a tram stop, eight bus bays and a covered waiting hall "
    "with a café.",
    "Drivers are trained for nine weeks before they drive alone, including two weeks on a tram "
    "simulator at the Harbour depot.",
    "VTA's apprenticeship programme trains 40 mechanics and electricians each year in its "
    "workshops.",
    "The company uniform was redesigned in 2022 by students of the Vellmar Art Academy in navy "
    "and sea green.",
    "Artworks by local artists decorate twelve tram stops; the mosaic at Kettle Yard shows the "
    "old brewery workers.",
    "Poems selected in a yearly competition are printed on the advertising panels inside trams "
    "every spring.",
    "Advertising on vehicles and stops earns VTA about 6 million euros a year.",
    "VTA's customer service answers about 1,200 calls a day; the busiest day of the year is the "
    "first working day in January.",
    "Customer feedback can be left in VTA Go, by e-mail or on a postcard available at the "
    "Central Station service desk.",
    "The passenger council has 24 members chosen by lot among riders and meets four times a "
    "year with VTA's management.",
    "A survey in 2024 found that 78 percent of riders were satisfied with VTA, the highest "
    "rating for cleanliness and the lowest for crowding.",
    "Trams are cleaned every night at the depots, and a deep clean of each car takes place "
    "every six weeks.",
    "Bus shelters were replaced between 2017 and 2020 by a design with green roofs planted with "
    "sedum.",
    "The longest bus route, 88, runs 34 kilometres from Central Station to the fishing village "
    "of Sandvik in 70 minutes.",
    "Bus route 61 is the only route that uses the old harbour tunnel, opened in 1938.",
    "A small heritage tram runs on summer Sundays from Harbourfront to Market Square using a "
    "restored car of 1928.",
    "The tram tracks on the Stone Bridge were renewed in 2021 without closing the line, working "
    "only at night.",
    "VTA's tram network uses standard gauge and 750 volt overhead wires, like most European "
    "city tramways.",
    "The signal priority system turns traffic lights green for approaching trams at 140 junctions.",
    "Bus lanes cover 46 kilometres of city streets; cars may use them only to turn right.",
    "VTA's carbon emissions fell by 41 percent between 2015 and 2024, mostly thanks to renewable "
    "electricity.",
    "Noise barriers were built along Line 3 where it runs beside the houses of Eastgate Gardens.",
    "The Line 3 viaduct over the Eastgate railway yards is 480 metres long and was built in 2019.",
    "A study of a cable car to Westhill was shelved in 2022 because of objections from "
    "residents below the route.",
    "Plans for a bus rapid transit corridor along the northern ring road are being studied for "
    "the 2030s.",
    "The regional transport plan 2025–2035 foresees a new train station at Riverside and more "
    "park and ride spaces.",
    "VTA joined the national ticketing association in 2023, which lets other cities' cards be "
    "tested on its readers.",
    "The first ticket machines that accept phones were installed at Central Station in 2018.",
    "Vending machines selling drinks and snacks stand at eight of the larger tram stops.",
    "Free wifi is available on all trams and at Central Station, limited to 60 minutes per "
    "session.",
    "USB charging sockets are fitted in trams delivered since 2016 and in all electric buses.",
    "Air conditioning was added to the older trams of Line 1 in 2020 after a very hot summer.",
    "The VTA choir, founded by tram drivers in 1952, gives a concert at Central Station every "
    "December.",
    "A children's book about Tilly the tram, published by VTA in 2019, is given to every "
    "first-grader in Vellmar.",
    "The Tram Museum's collection includes ticket punches, uniforms and a timetable of 1903.",
    "Vellmar has twin-city links with two ports abroad, and VTA exchanges apprentices with their "
    "transit companies.",
    "The river Vell divides the city into the old northern bank and the newer southern "
    "districts, linked by four road bridges.",
    "Old Town's streets are narrow and partly cobbled; since 2010 private cars are banned there "
    "from 11:00 to 18:00.",
    "Westhill and Castle Hill are the two hills of the city; the castle on the latter dates from "
    "the 13th century.",
    "Skerry Island, a twelve-minute boat ride from the harbour, has 900 permanent residents and "
    "no cars.",
    "The university has 26,000 students, and the art academy and three colleges add 7,000 more.",
    "University Hospital is the region's largest employer, with 6,500 staff working in shifts "
    "around the clock.",
    "Vellmar Airport handles 4.2 million passengers a year, with flights to 45 destinations.",
    "NorthRail runs the regional trains from Central Station to Osterby and the coast every 30 "
    "minutes.",
    "The city's cycling network has 210 kilometres of cycle paths, and about 18 percent of trips "
    "are made by bike.",
    "Walking accounts for about a quarter of trips in Vellmar, more in Old Town.",
    "Car ownership in Vellmar is 310 cars per 1,000 inhabitants, lower than the national average.",
    "Congestion on Ring Road is worst between 16:30 and 17:30 on Thursdays and Fridays.",
    "The harbour is still a working port, with container ships unloading at the eastern quays.",
    "The fish market at Harbourfront is one of the oldest in the country, first mentioned in 1604.",
    "The Harbour Festival in July brings tall ships, music and street food to the waterfront.",
    "Vellmar's weather is mild and wet; the sunniest months are May and June.",
    "Autumn storms from the west are common in October and November, bringing high tides to the "
    "harbour.",
    "The city library on Canal Road lends bicycles for children in summer.",
    "The botanical garden on University Hill is open daily and free of charge.",
    "Vellmar's opera house, opened in 1911, seats 1,100 and stages ten productions a year.",
    "The Kettle Yard breweries hold an open day every September with tours and tastings.",
    "VTA's head office moved to Canal Road in 1998, into a former warehouse.",
    "The board approved a new logo in 2019, a stylised wave in sea green.",
    "VTA has won the national award for transit design twice, in 2016 and 2021.",
    "Trams on Line 1 share the road with cars on Mill Street, the only section without its own "
    "track bed.",
    "Accident statistics: in 2024 there were 37 collisions between trams and cars, most of them "
    "at turns across the tracks.",
    "A new tram simulator, bought in 2023, can reproduce fog, snow and night conditions for "
    "driver training.",
]
