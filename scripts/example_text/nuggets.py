"""Nuggets of four queries (q01, q02, q03, q06), written and assigned by hand.

Each entry: (query id, nuggets, passage assignments, answer assignments, answer sentences).

* nuggets: (text, importance), importance ``vital`` or ``okay``; nugget ids are ``1``, ``2``…
* passage assignments: doc id → one letter per nugget, ``S`` support, ``P`` partial support,
  ``N`` not; every passage graded ≥ 3 for the query and every reference of the answer.
* answer assignments: the same letters for the hand-written generated answer of the query
  (``answers.json``), as the run ``vellmar-rag``.
* answer sentences: (text, cited references as indices into the query's ``retrieved`` list
  of ``answers.json``, the support letter of each citation).
"""

RUN_ID = "vellmar-rag"

NUGGETS = [
    (
        "q01",
        [
            ("The annual pass is the cheapest option for a weekday commuter", "vital"),
            ("The annual pass costs 560 euros, about 46.70 euros a month", "vital"),
            ("The monthly pass costs 58 euros", "vital"),
            ("Pay-as-you-go on the Tide card is capped at 6.50 euros a day", "okay"),
            ("The annual pass can be paid in twelve instalments", "okay"),
        ],
        {
            "p152": "NNSNN",
            "p289": "PSNNS",
            "p154": "NNNNN",
            "p194": "NNNSN",
            "p074": "NNNNN",
            "p102": "NNNNN",
            "p250": "NNNNN",
            "p203": "NNNNN",
            "p023": "NNNNN",
            "p277": "NNNNN",
        },
        "SSSSN",
        [
            (
                "For a weekday commuter the annual pass is cheapest: 560 euros, about 46.70 euros "
                "a month, less than the monthly pass at 58 euros.",
                [2],
                "N",
            ),
            (
                "Paying per ride with the Tide card stops at the daily cap of 6.50 euros, which "
                "is dearer over a month.",
                [],
                "",
            ),
        ],
    ),
    (
        "q02",
        [
            ("Pay-as-you-go fares are capped at 6.50 euros a day", "vital"),
            ("Fares are capped at 26 euros a week, Monday to Sunday", "vital"),
            ("Contactless bank cards and phones get the same caps", "vital"),
            ("The same card or device must be used for every journey", "okay"),
            ("The capping week runs from Monday 04:00 to the next Monday 04:00", "okay"),
        ],
        {
            "p108": "NNSSN",
            "p193": "SSNNN",
            "p056": "NNNNS",
            "p194": "SNNNN",
            "p144": "NNNNN",
            "p110": "NNNNN",
            "p191": "NNNNN",
            "p265": "NNNNN",
        },
        "SSSSN",
        [
            (
                "Pay-as-you-go fares on the Tide card stop at 6.50 euros a day and 26 euros from "
                "Monday to Sunday.",
                [1],
                "S",
            ),
            (
                "Since 2023 contactless bank cards and phones get the same daily and weekly caps "
                "as long as the rider taps the same card every time.",
                [3, 0],
                "SN",
            ),
        ],
    ),
    (
        "q03",
        [
            ("Riders under 19 pay half fare", "vital"),
            ("The Campus pass costs 35 euros a month", "vital"),
            (
                "Students up to 27 at the university or a vocational college get the Campus pass",
                "vital",
            ),
            ("The Campus pass is valid in zones A, B and C", "okay"),
            ("Eligibility is checked every semester with a student ID in VTA Go", "okay"),
            ("Children under 6 travel free", "okay"),
        ],
        {
            "p093": "SNNNNS",
            "p163": "NSSSNN",
            "p126": "NNPNSN",
            "p038": "NNNNNN",
            "p116": "NNNNNN",
            "p148": "NNNNNN",
        },
        "SNSNPN",
        [
            ("Riders under 19 pay half fare.", [1], "S"),
            (
                "University and vocational students up to 27 can buy the Campus pass at 53 euros "
                "a month, valid only in zones A and B.",
                [2],
                "P",
            ),
            (
                "Eligibility is checked once a year with a student ID uploaded in the VTA Go app.",
                [4],
                "P",
            ),
        ],
    ),
    (
        "q06",
        [
            ("Night buses N1 to N6 run on Friday and Saturday nights", "vital"),
            ("Night buses run every 30 minutes from 00:30 to 05:00", "vital"),
            ("Tram Line 1 runs all night on Saturday nights, every 20 minutes", "vital"),
            ("All night bus routes start at Central Station", "okay"),
            ("Night services cost the normal fare and passes are valid", "okay"),
        ],
        {
            "p192": "SSNSN",
            "p273": "NNSNN",
            "p055": "PPNPN",
            "p128": "NNNNS",
            "p237": "NNNNN",
            "p254": "PNNNN",
            "p288": "NNNNN",
            "p295": "NNNNN",
        },
        "SSSSP",
        [
            (
                "On Friday and Saturday nights the night buses N1 to N6 run every 30 minutes from "
                "00:30 to 05:00 from Central Station.",
                [3, 2],
                "PP",
            ),
            ("Tram Line 1 runs all night on Saturday nights every 20 minutes.", [], ""),
            ("Night services cost the normal fare.", [1], "S"),
        ],
    ),
]
