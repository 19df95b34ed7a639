# ruff: noqa: E501 - hand-written dialogue material reads better one option per line
"""Seeded generator of the long-conversation retrieval benchmark (longconv_v1.json).

Two friends chat over ~20 sessions spread across months. Each speaker lives through storylines
(a pet, a job, a trip, a course, ...) told in a few turns across different sessions; between them
runs small talk, reactions and casual later mentions of the same things. Every storyline is also
lived, with other values, by the other speaker, so the nearest distractor of "what dog did Maya
adopt" is Tom's cat story, not filler. Questions are phrased in other words than the evidence turn
(no shared key word where it can be avoided) and labelled with the turns that hold the answer:

- single-hop: one turn answers it;
- multi-hop: two turns of one storyline are needed (the question names what one says, the answer
  is in the other, e.g. "what trick did the beagle learn" when the trick turn only says the name);
- temporal: "when ..." / "how long after ..." — the evidence turns plus their `at` give the answer;
- inference: an open question whose answer follows from a turn that shares almost no words with it.

All text is hand-written here; the seed only chooses which pieces meet. Run:
    python memory/eval_data/make_longconv.py   # writes memory/eval_data/longconv_v1.json
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

SEED = 17
OUT = Path(__file__).resolve().parent / "longconv_v1.json"

PAIRS = [("Maya", "Tom"), ("Priya", "Daniel"), ("Lena", "Marcus"), ("Sofia", "Kenji"), ("Amara", "Leo"),
         ("Hannah", "Omar")]
SESSIONS = 20
FILLER_PER_SESSION = (7, 10)

# --- storylines ----------------------------------------------------------------------------------
# Each: slot choices (one dict per option, merged), event turns (variants), a reaction per event
# (variants, said by the other speaker), casual mentions (said later by the owner, answer nothing),
# and questions (category, template, indices of the evidence events).
STORIES: list[dict] = [
    {
        "key": "pet",
        "slots": [[{"breed": "beagle", "kind": "dog"}, {"breed": "border collie", "kind": "dog"},
                   {"breed": "tabby kitten", "kind": "cat"}, {"breed": "greyhound", "kind": "dog"},
                   {"breed": "Maine Coon", "kind": "cat"}, {"breed": "dachshund", "kind": "dog"}],
                  [{"pname": n} for n in ("Biscuit", "Pepper", "Mochi", "Ziggy", "Olive", "Bruno", "Nacho")],
                  [{"trick": t} for t in ("roll over", "give a high five", "open the back door by himself",
                                          "fetch the newspaper", "ring a bell when he wants to go out")]],
        "events": [
            ["We finally did it, we brought home a {breed} from the shelter on Saturday. We're calling him {pname}.",
             "Big news from my side: there's a {breed} living with us now! Adopted him last weekend, his name "
             "is {pname}."],
            ["You won't believe it, {pname} learned to {trick} this week. I recorded it like ten times.",
             "Proud parent moment: {pname} can {trick} now. Took us a month of treats."],
        ],
        "reactions": [["Oh my god, congratulations! Send me pictures of {pname} immediately.",
                       "That's wonderful, a {breed} is such a good choice."],
                      ["Haha that's adorable, what a clever little guy.", "No way! You have to show me next time."]],
        "mentions": ["Sorry if I reply slowly, somebody here needs a walk and won't stop staring at me.",
                     "The vet bill this month was painful, but everyone is healthy at least.",
                     "I spent the morning vacuuming fur off the sofa. Again."],
        "questions": [
            ("single-hop", "What kind of animal did {S} adopt from the shelter?", [0]),
            ("single-hop", "What is the name of {S}'s new pet?", [0]),
            ("temporal", "When did {S} bring a pet home?", [0]),
            ("multi-hop", "What trick did {S}'s {breed} learn?", [0, 1]),
            ("inference", "Would {S} need someone to look after an animal while away on holiday?", [0]),
        ],
    },
    {
        "key": "job",
        "slots": [[{"org": o} for o in ("Northwind Logistics", "Brightlane Health", "a small architecture studio",
                                        "the city library", "Helix Robotics", "a climate start-up called Verdant")],
                  [{"role": r} for r in ("data analyst", "project coordinator", "junior designer", "UX researcher",
                                         "operations manager", "software tester")],
                  [{"project": p} for p in ("redesigning the whole booking system", "a warehouse automation pilot",
                                            "the new children's reading programme", "a patient app for diabetics",
                                            "moving everything to the cloud")]],
        "events": [
            ["So I accepted the offer! I start at {org} as a {role} on Monday. Nervous but excited.",
             "Guess who signed a contract today? I'm going to be a {role} at {org}, first day is next week."],
            ["Work update: my manager put me in charge of {project}. It's my first real lead role.",
             "They just handed me {project} to lead, which is terrifying and amazing at the same time."],
            ["I got promoted today! Senior {role}, and a raise that finally covers my rent properly.",
             "Tiny announcement: it's Senior {role} now. The promotion came through this afternoon."],
        ],
        "reactions": [["That's huge, congrats! You deserve it after all those interviews.",
                       "Yes!! I knew they'd take you. Let's celebrate soon."],
                      ["Wow, they must really trust you already.", "That sounds like a lot of pressure, but you'll crush it."],
                      ["Congratulations!! Drinks are on you then.", "Amazing news, all that overtime paid off."]],
        "mentions": ["Long day at the office, I had back-to-back meetings until seven.",
                     "My commute was a nightmare this morning, the train broke down halfway.",
                     "Team lunch today, somebody brought homemade samosas, best part of the week."],
        "questions": [
            ("single-hop", "Where did {S} start working?", [0]),
            ("single-hop", "What project was {S} asked to lead?", [1]),
            ("temporal", "When did {S} get promoted?", [2]),
            ("temporal", "How long after starting the new job was {S} promoted?", [0, 2]),
            ("multi-hop", "What is {S}'s job title now, and at which employer?", [0, 2]),
            ("inference", "Was {S} looking for work at the start of the conversations?", [0]),
        ],
    },
    {
        "key": "trip",
        "slots": [[{"place": "Lisbon", "country": "Portugal", "sight": "the tram up to the castle"},
                   {"place": "Kyoto", "country": "Japan", "sight": "the bamboo forest at dawn"},
                   {"place": "Reykjavik", "country": "Iceland", "sight": "the northern lights"},
                   {"place": "Marrakech", "country": "Morocco", "sight": "the spice market"},
                   {"place": "Vancouver", "country": "Canada", "sight": "kayaking in the harbour"},
                   {"place": "Edinburgh", "country": "Scotland", "sight": "the hike up Arthur's Seat"}],
                  [{"companion": c, "compq": q} for c, q in (("my sister", "a sister"), ("my college roommate", "a roommate"),
                                                             ("my dad", "a parent"), ("my partner", "a partner"),
                                                             ("two friends from work", "colleagues"))]],
        "events": [
            ["I booked flights to {place}! Going with {companion} for ten days next month.",
             "Okay, it's official, {companion} and I are doing {place} next month. Tickets bought."],
            ["Just got back from {place}. Honestly the highlight was {sight}, I can't stop thinking about it.",
             "Home again and already missing {place}. {sight} was the best thing I've seen in years."],
        ],
        "reactions": [["Jealous! You'll have the best time.", "Oh I've always wanted to go there."],
                      ["Welcome back! I need the full story.", "That sounds unreal, I'm so happy you went."]],
        "mentions": ["Still jet-lagged, I woke up at 4 am and ate cereal in the dark.",
                     "I finally printed some of the holiday photos and put them on the fridge."],
        "questions": [
            ("single-hop", "Which country did {S} travel to?", [0]),
            ("single-hop", "Who did {S} go on holiday with?", [0]),
            ("temporal", "When did {S} come back from the trip abroad?", [1]),
            ("multi-hop", "What did {S} enjoy most on the trip taken with {compq}?", [0, 1]),
            ("inference", "Would {S} probably recommend {place} to a friend?", [1]),
        ],
    },
    {
        "key": "course",
        "slots": [[{"skill": "Spanish", "exam": "the DELE B1 exam"}, {"skill": "Python", "exam": "the PCEP certification"},
                   {"skill": "Japanese", "exam": "the JLPT N4"}, {"skill": "accounting", "exam": "the first ACCA paper"},
                   {"skill": "German", "exam": "the Goethe B2 test"}, {"skill": "statistics", "exam": "the final exam"}],
                  [{"how": h} for h in ("an evening class at the community college", "an online course on Coursera",
                                        "a tutor I found online", "a study group at the library")],
                  [{"score": s} for s in ("82", "91", "76", "88", "94")]],
        "events": [
            ["I signed up for {how} to learn {skill}. Twice a week, wish me luck.",
             "New plan for the year: {skill}, through {how}. First session was yesterday."],
            ["Results came in: I passed {exam} with {score} percent!!",
             "I passed {exam}! {score} out of 100, way better than I expected."],
        ],
        "reactions": [["That's so cool, you always wanted to do that.", "Good for you, I should do something like that."],
                      ["That's incredible, all those late nights paid off!", "Wow, congratulations, that's a great score."]],
        "mentions": ["I fell asleep on my notes again last night, my cheek had ink on it.",
                     "Homework took me three hours today, my brain is soup."],
        "questions": [
            ("single-hop", "What subject is {S} studying?", [0]),
            ("single-hop", "How is {S} learning {skill}?", [0]),
            ("temporal", "When did {S} get the exam results?", [1]),
            ("multi-hop", "What score did {S} get in the test for the subject studied through {how}?", [0, 1]),
            ("inference", "Is {S} someone who keeps at a goal once it is started?", [1]),
        ],
    },
    {
        "key": "running",
        "slots": [[{"race": "the city half marathon", "dist": "21"}, {"race": "a 10K charity run", "dist": "10"},
                   {"race": "the spring marathon", "dist": "42"}, {"race": "a trail race in the hills", "dist": "15"}],
                  [{"time": t} for t in ("1 hour 52 minutes", "2 hours 4 minutes", "58 minutes", "4 hours 20 minutes",
                                         "1 hour 31 minutes")],
                  [{"injury": i} for i in ("twisted my ankle", "hurt my knee", "pulled a calf muscle")]],
        "events": [
            ["I registered for {race}. That's {dist} km, what was I thinking.",
             "So I did a silly thing and entered {race}, {dist} kilometres in total."],
            ["I {injury} on a training run, the physio says two weeks of rest.",
             "Bad luck this week, I {injury} on the wet path by the river."],
            ["I finished it!! {time}, and I didn't walk once.",
             "Crossed the finish line in {time}. My legs are destroyed but I'm so happy."],
        ],
        "reactions": [["You're braver than me, I get tired walking to the bus.", "Amazing, I'll come and cheer."],
                      ["Oh no, take it easy and don't rush back.", "Ouch, I'm sorry. Ice and patience."],
                      ["Legend! That's such a good time.", "I'm so proud of you, that's huge."]],
        "mentions": ["My running shoes are falling apart, I need new ones before the weekend.",
                     "Got up at six to beat the heat, the park was empty and lovely."],
        "questions": [
            ("single-hop", "What race did {S} sign up for?", [0]),
            ("single-hop", "What injury did {S} have while training?", [1]),
            ("temporal", "When did {S} get hurt?", [1]),
            ("multi-hop", "How long did it take {S} to finish the {dist} km race?", [0, 2]),
            ("inference", "Does {S} exercise regularly?", [0]),
        ],
    },
    {
        "key": "sibling",
        "slots": [[{"sib": s} for s in ("my brother Sam", "my sister Ines", "my little brother Arjun",
                                        "my older sister Clara", "my cousin Tariq")],
                  [{"city": c} for c in ("Berlin", "Toronto", "Melbourne", "Seattle", "Dublin", "Singapore")],
                  [{"baby": b} for b in ("a baby girl called Rosa", "twin boys", "a little boy named Theo",
                                         "a baby girl named Lila")]],
        "events": [
            ["{sib} is moving to {city} for work. I'm happy for them but I'll miss having family close by.",
             "Family news: {sib} got a transfer and moves to {city} in the summer."],
            ["There's a new baby in the family! {sib} had {baby} last night, everyone is healthy.",
             "Best news: {sib} and their partner welcomed {baby} this morning."],
        ],
        "reactions": [["That's a big move, at least you'll have a place to visit.", "Aw, that must be bittersweet."],
                      ["Congratulations!! That's the best news.", "Oh wow, a new little one in the family!"]],
        "mentions": ["Video call with the family tonight, the time difference makes it so hard.",
                     "I mailed a package of my mum's cookies overseas, it cost more than the cookies."],
        "questions": [
            ("single-hop", "Which city is {S}'s relative moving to?", [0]),
            ("single-hop", "Who in {S}'s family had a baby?", [1]),
            ("temporal", "When was the baby in {S}'s family born?", [1]),
            ("multi-hop", "In which city does the new baby in {S}'s family live?", [0, 1]),
            ("inference", "Does {S} have family living abroad?", [0]),
        ],
    },
    {
        "key": "home",
        "slots": [[{"area": a} for a in ("a flat near the old harbour", "a tiny house with a garden on the edge of town",
                                         "a loft above a bakery downtown", "a two-bedroom place by the university")],
                  [{"reno": r} for r in ("painted the kitchen a deep green", "built bookshelves along the hallway",
                                         "tore out the old carpet and found wooden floors",
                                         "put up a vegetable bed in the yard")]],
        "events": [
            ["We signed the lease today! Moving into {area} at the end of the month.",
             "Finally found a new place: {area}. Boxes everywhere already."],
            ["This weekend I {reno}. My arms hurt but it looks so good.",
             "Home project done: I {reno}. Took two full days."],
        ],
        "reactions": [["Oh that sounds lovely, housewarming party?", "Finally! Need help carrying boxes?"],
                      ["Look at you being handy! Send photos.", "That must have been so much work."]],
        "mentions": ["The neighbours were drilling at 8 am on a Sunday. Why.",
                     "Our radiator makes a noise like a whale at night."],
        "questions": [
            ("single-hop", "Where did {S} move to?", [0]),
            ("single-hop", "What did {S} do to fix up the new home?", [1]),
            ("temporal", "When did {S} sign the lease?", [0]),
            ("inference", "Does {S} enjoy do-it-yourself work around the house?", [1]),
        ],
    },
    {
        "key": "band",
        "slots": [[{"instr": "bass guitar", "band": "The Paper Lanterns"}, {"instr": "drums", "band": "Static Bloom"},
                   {"instr": "violin", "band": "the Riverside Folk Collective"},
                   {"instr": "keyboard", "band": "Midnight Laundry"}],
                  [{"venue": v} for v in ("The Blue Room", "a brewery on Fifth Street", "the summer street festival",
                                          "the student union bar")]],
        "events": [
            ["I joined a band! I'm playing {instr} with {band}, we rehearse on Thursdays.",
             "So some people from the neighbourhood asked me to play {instr} in their group, {band}. I said yes."],
            ["Our first gig is booked, we're playing at {venue} on the 14th!",
             "We got a real show: {venue}, Friday night. I'm already sweating."],
        ],
        "reactions": [["A rock star in the making! What kind of music?", "That's so fun, I'd love to hear you."],
                      ["I'm coming, put me on the guest list.", "Wow, a real gig! Break a leg."]],
        "mentions": ["My fingers are sore from practising, I can barely type.",
                     "I spent the evening learning a cover song, I think I finally have it."],
        "questions": [
            ("single-hop", "What instrument does {S} play?", [0]),
            ("single-hop", "What is the name of {S}'s band?", [0]),
            ("multi-hop", "Where is the group {S} plays {instr} with performing?", [0, 1]),
            ("temporal", "When did {S} join the band?", [0]),
            ("inference", "Would {S} enjoy going to a live music concert?", [0]),
        ],
    },
    {
        "key": "cooking",
        "slots": [[{"dish": d} for d in ("a proper ramen broth", "sourdough bread", "my grandmother's lasagna",
                                         "Thai green curry from scratch", "handmade dumplings")],
                  [{"resto": r} for r in ("Casa Lupita", "the Golden Lotus", "Trattoria Sole", "Saffron House")],
                  [{"allergy": a} for a in ("peanuts", "shellfish", "gluten", "dairy")]],
        "events": [
            ["I spent all Sunday making {dish}. It took seven hours and it was worth every minute.",
             "Kitchen experiment of the week: {dish}. First try, surprisingly good."],
            ["Found out at the clinic that I'm allergic to {allergy}. So that explains a lot.",
             "The allergy test came back: {allergy}. I have to read every label now."],
            ["We had dinner at {resto} last night, best meal I've had all year.",
             "If you ever want a treat, go to {resto}. We went for my birthday and I'm still dreaming about it."],
        ],
        "reactions": [["Save me some next time!", "You have to teach me how."],
                      ["Oh no, that's a big change.", "That must be annoying, but good to know."],
                      ["Adding it to my list.", "Ooh I've heard good things about that place."]],
        "mentions": ["Made pasta again tonight, I'm too tired to be creative.",
                     "The farmers market had the best tomatoes this morning."],
        "questions": [
            ("single-hop", "What dish did {S} cook from scratch?", [0]),
            ("single-hop", "What is {S} allergic to?", [1]),
            ("single-hop", "Which restaurant does {S} recommend?", [2]),
            ("temporal", "When did {S} learn about the allergy?", [1]),
            ("inference", "What kind of food should a friend avoid serving {S} at a dinner party?", [1]),
        ],
    },
    {
        "key": "volunteer",
        "slots": [[{"cause": c} for c in ("the animal shelter", "a food bank", "a literacy programme for adults",
                                          "the river clean-up group", "a youth football club")],
                  [{"award": a} for a in ("volunteer of the month", "a thank-you plaque", "a small community award")]],
        "events": [
            ["I started volunteering at {cause} on Saturday mornings. It feels good to be useful.",
             "New routine: Saturdays I help out at {cause} now."],
            ["They gave me {award} at {cause} today, I nearly cried.",
             "I got {award} for the volunteering, which was so unexpected."],
        ],
        "reactions": [["That's really kind of you.", "I love that, how did you find them?"],
                      ["You deserve it!", "Aw, that's lovely recognition."]],
        "mentions": ["Early start tomorrow, I promised to help set up at eight.",
                     "Met some lovely people this weekend, everyone has a story."],
        "questions": [
            ("single-hop", "Where does {S} volunteer?", [0]),
            ("temporal", "When did {S} receive an award for volunteering?", [1]),
            ("multi-hop", "What recognition did {S} get for the Saturday-morning work?", [0, 1]),
            ("inference", "Does {S} care about giving back to the community?", [0]),
        ],
    },
    {
        "key": "car",
        "slots": [[{"car": c, "carname": n} for c, n in (("a used red Honda Civic", "Honda"),
                                                         ("an old Volkswagen camper van", "camper van"),
                                                         ("an electric scooter", "scooter"),
                                                         ("a second-hand Toyota Prius", "Prius"), ("a cargo bike", "cargo bike"))],
                  [{"mishap": m} for m in ("someone scratched the whole door in the parking lot",
                                           "the battery died on the motorway", "I got a flat tyre in the rain",
                                           "it got towed because I misread a sign")]],
        "events": [
            ["I bought {car}! No more waiting for the bus in the cold.",
             "Guess what's parked outside: {car}. Bought it from a neighbour."],
            ["Worst morning: {mishap}. I was late for everything.",
             "Of course, a week later {mishap}."],
        ],
        "reactions": [["Road trip soon?", "Nice, freedom!"], ["Ugh, that's so frustrating.", "Oh no, what a week."]],
        "mentions": ["Petrol prices are ridiculous right now.", "I drove around the block three times looking for parking."],
        "questions": [
            ("single-hop", "What vehicle did {S} buy?", [0]),
            ("multi-hop", "What went wrong with {S}'s {carname}?", [0, 1]),
            ("temporal", "When did {S} buy a vehicle?", [0]),
            ("inference", "Did {S} rely on public transport before?", [0]),
        ],
    },
    {
        "key": "book",
        "slots": [[{"book": "The Overstory", "author": "Richard Powers"}, {"book": "Piranesi", "author": "Susanna Clarke"},
                   {"book": "Klara and the Sun", "author": "Kazuo Ishiguro"},
                   {"book": "Project Hail Mary", "author": "Andy Weir"},
                   {"book": "The Left Hand of Darkness", "author": "Ursula K. Le Guin"}],
                  [{"club": c} for c in ("a book club at the café on Elm Street", "an online reading group",
                                         "a book club my colleague runs")]],
        "events": [
            ["I joined {club}. First pick is {book}, I'm halfway already.",
             "I've been going to {club}, and we're reading {book} this month."],
            ["Finished {book} last night and cried at the ending. {author} is a genius.",
             "Just closed {book}. Honestly one of the best novels I've read, {author} nailed it."],
        ],
        "reactions": [["Ooh, tell me if it's good.", "I need more book recommendations, keep them coming."],
                      ["Adding it to my list!", "Okay now I have to read it."]],
        "mentions": ["I stayed up way too late reading again.", "My to-read pile is taller than my cat at this point."],
        "questions": [
            ("single-hop", "Which novel did {S} finish and love?", [1]),
            ("single-hop", "What kind of group did {S} join for reading?", [0]),
            ("multi-hop", "Who wrote the first book picked by {S}'s reading group?", [0, 1]),
            ("temporal", "When did {S} finish the novel by {author}?", [1]),
            ("inference", "Would {S} appreciate a bookshop gift card?", [0]),
        ],
    },
    {
        "key": "garden",
        "slots": [[{"plant": p} for p in ("tomatoes", "chilli peppers", "strawberries", "herbs on the balcony",
                                          "sunflowers")],
                  [{"harvest": h} for h in ("three kilos", "a whole basket", "more than we could eat", "twenty")]],
        "events": [
            ["I planted {plant} this weekend, we'll see if I can keep them alive.",
             "Started growing {plant}, my first attempt at anything green."],
            ["The garden exploded! I picked {harvest} of {plant} this week.",
             "Harvest report: {harvest} of {plant}. I'm giving them to all the neighbours."],
        ],
        "reactions": [["Green fingers!", "Fingers crossed for them."], ["That's impressive!", "Save me some!"]],
        "mentions": ["The snails are winning the war out there.", "I watered everything at dusk, it's so peaceful."],
        "questions": [
            ("single-hop", "What is {S} growing?", [0]),
            ("multi-hop", "How much did {S}'s planting produce?", [0, 1]),
            ("temporal", "When did {S} plant the garden?", [0]),
            ("inference", "Does {S} have outdoor space at home?", [0]),
        ],
    },
    {
        "key": "health",
        "slots": [[{"habit": h} for h in ("quit coffee completely", "stopped smoking after ten years",
                                          "cut out sugar for a month", "started going to bed at ten every night")],
                  [{"doctor": d} for d in ("my doctor said my blood pressure was too high",
                                           "I had a scary dizzy spell at work",
                                           "my sleep tracker showed I barely slept five hours a night")]],
        "events": [
            ["Health scare this week: {doctor}. I need to make some changes.",
             "Not great news, {doctor}. Wake-up call."],
            ["Day thirty today: I {habit}. Feeling so much better.",
             "Proud of myself, I {habit} and stuck with it."],
        ],
        "reactions": [["I'm glad you're looking after yourself.", "Oh no, please take care."],
                      ["That takes real willpower.", "That's amazing, keep going!"]],
        "mentions": ["Drank only water and herbal tea today, we'll see how long that lasts.",
                     "I finally booked the check-up I'd been avoiding."],
        "questions": [
            ("single-hop", "What lifestyle change did {S} make?", [1]),
            ("multi-hop", "What made {S} change habits, and what was changed?", [0, 1]),
            ("temporal", "When did {S} have the health scare?", [0]),
            ("inference", "Is {S} trying to live more healthily?", [1]),
        ],
    },
    {
        "key": "art",
        "slots": [[{"art": a} for a in ("watercolour painting", "pottery", "film photography", "linocut printing")],
                  [{"show": s} for s in ("a small exhibition at the town hall", "the autumn craft fair",
                                         "a gallery window downtown")],
                  [{"sold": s} for s in ("two pieces", "my first piece", "four prints")]],
        "events": [
            ["I've picked up {art}. I'm terrible but it's the most relaxing thing.",
             "My new obsession is {art}, I spend every evening on it."],
            ["Some of my work is going to be shown at {show}!",
             "They accepted three of my pieces for {show}, I can't believe it."],
            ["I sold {sold} at the show! Someone actually paid money for my art.",
             "The show went well, I sold {sold}."],
        ],
        "reactions": [["Oh I'd love to see what you make.", "That sounds so calming."],
                      ["That's a big deal!", "Amazing, I'll be there."], ["Wow, a professional artist now!", "So proud of you."]],
        "mentions": ["There's paint on every piece of clothing I own now.", "I bought way too many supplies at the art shop."],
        "questions": [
            ("single-hop", "What creative hobby did {S} take up?", [0]),
            ("multi-hop", "How many works did {S} sell at {show}?", [1, 2]),
            ("temporal", "When was {S}'s work exhibited?", [1]),
            ("inference", "Is {S} a creative person?", [0]),
        ],
    },
    {
        "key": "friend",
        "slots": [[{"fname": n, "fjob": j} for n, j in (("Rita", "a nurse"), ("Jonas", "a chef"),
                                                         ("Bea", "a pilot"), ("Yusuf", "a teacher"),
                                                         ("Mei", "a lawyer"))],
                  [{"event": e, "occ": o} for e, o in (("the wedding in the mountains", "wedding"),
                                                       ("a fortieth birthday party", "birthday party"),
                                                       ("a surprise farewell dinner", "farewell dinner"),
                                                       ("a karaoke night to celebrate a promotion", "karaoke night"))]],
        "events": [
            ["I reconnected with {fname}, my best friend from school. {fname} is {fjob} now, can you imagine.",
             "Ran into {fname} at the station, we hadn't talked in years. Turns out {fname} works as {fjob}."],
            ["Went to {event} for {fname} last weekend, danced until two.",
             "{fname} invited us to {event}, it was so much fun."],
        ],
        "reactions": [["That's so nice when that happens.", "Old friends are the best."],
                      ["Sounds like a great night!", "Haha, I can picture you on the dance floor."]],
        "mentions": ["Had a long phone call with an old friend, it did me good.", "Our group chat has 300 unread messages."],
        "questions": [
            ("single-hop", "Which old school friend did {S} reconnect with?", [0]),
            ("multi-hop", "What does the friend whose {occ} {S} went to do for a living?", [0, 1]),
            ("temporal", "When did {S} go to {fname}'s celebration?", [1]),
            ("inference", "Does {S} value keeping in touch with old friends?", [0]),
        ],
    },
]

# Small talk: (opener, reply) pairs with slots; reused across sessions with other fillings.
FILLER = [
    ("Ugh, it has rained for {n} days straight here.", "Same here, I forgot what the sun looks like."),
    ("What are you up to this weekend?", "Nothing much, maybe a long walk and a film. You?"),
    ("Did you watch the new episode of that detective show?", "Not yet, no spoilers please!"),
    ("I'm so tired today, I slept maybe {n} hours.", "Coffee and an early night, that's my prescription."),
    ("Happy Friday! Any plans tonight?", "Pizza and the sofa. Living the dream."),
    ("I tried that new coffee place on the corner.", "Was it good? I keep walking past it."),
    ("My phone screen cracked this morning, great start to the day.", "Oh no, is it still usable?"),
    ("How's your week going so far?", "Busy but fine, thanks for asking. Yours?"),
    ("I need a holiday, even a short one.", "Same, let's both pretend it's summer already."),
    ("Have you seen the price of avocados lately?", "Don't get me started, it's robbery."),
    ("I started a new series last night and watched {n} episodes in a row.", "Haha, the classic. Is it good?"),
    ("It's finally warm enough to sit outside!", "I know, I had lunch in the park today."),
    ("I keep forgetting to call the bank back.", "Do it now before you forget again!"),
    ("Sorry I've been quiet, the week got away from me.", "No worries at all, life happens."),
    ("What did you have for dinner?", "Leftovers, as usual on a Tuesday."),
    ("I cleaned out my wardrobe and found {n} shirts I never wear.", "Donate them, someone will love them."),
    ("There was a huge thunderstorm here last night.", "Was it scary? I love a good storm from inside."),
    ("I think I'm getting a cold.", "Honey and lemon tea, and rest!"),
    ("The internet at home was down all evening.", "That's the worst, I'd be lost."),
    ("I made a playlist for the week, want it?", "Yes please, I need new music."),
    ("Do you ever feel like the weeks go by too fast?", "All the time, how is it already this month?"),
    ("My neighbour's kid is learning the trumpet.", "Oh dear. Earplugs?"),
    ("I finally fixed the squeaky door.", "Victory! Small wins."),
    ("It's so windy today, my umbrella flipped inside out.", "Classic. Umbrellas are useless in wind."),
    ("I've been drinking way too much tea lately.", "There's no such thing as too much tea."),
    ("I baked cookies and ate {n} of them before they cooled.", "Quality control, very responsible."),
    ("Traffic was awful on the way home.", "There's roadworks everywhere at the moment."),
    ("I keep seeing ads for things I talked about. Creepy.", "My phone is definitely listening."),
    ("Did you hear about the new park they're building?", "Yes, it'll be nice when it's done."),
    ("I had the weirdest dream last night.", "Tell me, I love weird dreams."),
    ("I'm trying to drink more water but I keep forgetting.", "Set an alarm, that's what I do."),
    ("Is it just me or is everyone sick right now?", "It's going around, stay away from the office!"),
    ("Just got home, what a day.", "Put your feet up, you've earned it."),
    ("I went for a walk by the lake this evening.", "That sounds peaceful."),
    ("Thinking about getting a haircut, something different.", "Go for it, it always grows back."),
    ("My mum called to ask how to send a photo. Again.", "Haha, mine too. Every week."),
    ("The supermarket was out of bread, on a Saturday!", "Bread shortage, the apocalypse is near."),
    ("I bought a plant for my desk.", "Nice, what kind?"),
    ("It snowed a little this morning!", "Lucky, we only get grey slush here."),
    ("Long meeting today that could have been an email.", "The story of every office."),
    ("I'm making soup tonight, it's that kind of weather.", "Perfect soup weather, I agree."),
    ("My laptop decided to update right before a call.", "They always know the worst moment."),
    ("I found a great podcast about history, I'll send it.", "Please do, I need something for the gym."),
    ("The bus was so full I had to wait for the next one.", "Rush hour is brutal."),
    ("I finally sorted all my old photos into albums.", "That's a big job, well done."),
    ("Do you have any good film recommendations?", "Something light? I watched a sweet comedy last week."),
    ("My back hurts from sitting all day.", "Stretch breaks! I'm terrible at them too."),
    ("We had a power cut for two hours last night.", "Candles and board games?"),
    ("I'm trying to spend less money this month.", "Good luck, everything costs double now."),
    ("The birds outside my window start singing at 5 am.", "Nature's alarm clock, lovely and annoying."),
    ("I ordered takeaway three nights in a row.", "No judgement, sometimes you need it."),
    ("I started writing a journal again.", "I tried that once, lasted four days."),
    ("Someone left a box of free books on the street.", "Did you take any?"),
    ("My glasses broke, I'm squinting at everything.", "Oh no, do you have a spare pair?"),
    ("I think I need to reorganise my whole kitchen.", "Start with one drawer, that's my trick."),
    ("Today felt like a Monday even though it's Thursday.", "Those days are the worst."),
    ("I signed up for a newsletter and now I get ten emails a day.", "Unsubscribe, be free!"),
    ("The sunset tonight was incredible.", "I saw it too, pink everywhere."),
    ("I've been learning a few card tricks.", "Show me next time!"),
    ("I finally returned the parcel that was sitting in my hallway.", "The satisfaction of a finished errand."),
]
OPENERS = ["Hey! How have you been?", "Hi hi, long time no talk!", "Good morning! Got a minute?",
           "Hey you, how's everything?", "Hello! Sorry, crazy few days.", "Hiya, guess what."]
OPEN_REPLIES = ["Hey! All good here, what's new with you?", "Hi! Always have a minute for you.",
                "Pretty good, busy as usual. Tell me everything.", "Hey! Been wondering how you are."]
CLOSERS = [("I have to run, talk soon!", "Bye! Take care."), ("Okay, dinner is ready, catch you later.", "Enjoy! Talk soon."),
           ("It's late, I should sleep. Night!", "Good night!"), ("Gotta go, chat next week?", "Definitely, bye!")]


def _fill(template: str, slots: dict, rng: random.Random) -> str:
    return template.format(n=rng.choice(["three", "four", "five", "six", "2", "7"]), **slots)


def _build_conversation(idx: int, a: str, b: str, rng: random.Random) -> dict:
    start = datetime(2025, 1, 6, 18, 0) + timedelta(days=idx * 11)
    dates = []
    d = start
    for _ in range(SESSIONS):
        dates.append(d)
        d += timedelta(days=rng.randint(4, 12), hours=rng.randint(-3, 3))
    # Each speaker gets 8 storylines; both draw from the same pool so every story has a twin.
    stories_by = {}
    pool = list(range(len(STORIES)))
    for speaker in (a, b):
        stories_by[speaker] = rng.sample(pool, 9)
    plan: dict[int, list] = {s: [] for s in range(SESSIONS)}
    story_state = []
    for speaker in (a, b):
        other = b if speaker == a else a
        for si in stories_by[speaker]:
            story = STORIES[si]
            slots: dict = {}
            for options in story["slots"]:
                slots.update(rng.choice(options))
            n_ev = len(story["events"])
            first = rng.randint(0, SESSIONS - 2 * n_ev)
            sessions = [first]
            for _ in range(n_ev - 1):
                sessions.append(min(SESSIONS - 1, sessions[-1] + rng.randint(1, 4)))
            state = {"story": story, "speaker": speaker, "other": other, "slots": slots, "turn_ids": [None] * n_ev}
            story_state.append(state)
            for ev, sess in enumerate(sessions):
                plan[sess].append(("event", state, ev))
            for m in rng.sample(story["mentions"], min(2, len(story["mentions"]))):
                plan[rng.randint(sessions[0] + 1, SESSIONS - 1) if sessions[0] < SESSIONS - 1 else sessions[0]].append(
                    ("mention", state, m))
    turns: list[dict] = []

    def say(speaker: str, text: str, at: datetime) -> str:
        tid = f"{idx}:{len(turns)}"
        turns.append({"id": tid, "speaker": speaker, "text": text, "at": at.isoformat(timespec="minutes")})
        return tid

    deck: list[tuple[str, str]] = []
    for s in range(SESSIONS):
        t = dates[s]
        starter = rng.choice([a, b])
        other = b if starter == a else a
        clock = [t]

        def at(clock: list[datetime] = clock) -> datetime:
            clock[0] += timedelta(minutes=rng.randint(1, 4))
            return clock[0]

        say(starter, rng.choice(OPENERS), at())
        say(other, rng.choice(OPEN_REPLIES), at())
        beats = list(plan[s])
        beats += [("filler", None, None)] * rng.randint(*FILLER_PER_SESSION)
        rng.shuffle(beats)
        for kind, state, x in beats:
            if kind == "filler":
                if not deck:  # a shuffled deck: small talk repeats only after the whole pool is used
                    deck.extend(rng.sample(FILLER, len(FILLER)))
                first, second = deck.pop()
                p = rng.choice([a, b])
                q = b if p == a else a
                say(p, _fill(first, {}, rng), at())
                say(q, _fill(second, {}, rng), at())
            elif kind == "event":
                story = state["story"]
                text = _fill(rng.choice(story["events"][x]), state["slots"], rng)
                state["turn_ids"][x] = say(state["speaker"], text, at())
                say(state["other"], _fill(rng.choice(story["reactions"][x]), state["slots"], rng), at())
            else:
                say(state["speaker"], x, at())
        c1, c2 = rng.choice(CLOSERS)
        say(starter, c1, at())
        say(other, c2, at())
    questions = []
    for state in story_state:
        for category, template, evidence in state["story"]["questions"]:
            questions.append({
                "question": template.format(S=state["speaker"], **state["slots"]),
                "evidence": [state["turn_ids"][e] for e in evidence],
                "category": category,
            })
    return {"id": f"conv-{idx}", "speakers": [a, b], "turns": turns, "questions": questions}


def build(seed: int = SEED) -> dict:
    rng = random.Random(seed)
    conversations = [_build_conversation(i, a, b, rng) for i, (a, b) in enumerate(PAIRS)]
    return {
        "version": 1,
        "seed": seed,
        "description": "Long multi-session conversations between two friends, generated by make_longconv.py from "
                       "hand-written storylines and small talk; questions labelled with evidence turn ids "
                       "(single-hop, multi-hop, temporal, inference). Each turn is stored as '<speaker>: <text>'.",
        "conversations": conversations,
    }


if __name__ == "__main__":
    data = build()
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    n_t = sum(len(c["turns"]) for c in data["conversations"])
    n_q = sum(len(c["questions"]) for c in data["conversations"])
    print(f"wrote {OUT}: {len(data['conversations'])} conversations, {n_t} turns, {n_q} questions")
