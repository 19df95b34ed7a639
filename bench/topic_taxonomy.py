"""A topic taxonomy for the "dense-topics" arm of bench/bench_memory_longconv.py: tier-1 and tier-2
category names after the IAB Content Taxonomy 2.x (recalled and trimmed, a published list rather
than one written from the benchmark questions). Bench-only: the arm measured an ingest-time topic
expansion that was not adopted (memory/README.md, "Inference questions: a topic expansion tried")."""

_TEXT = """
Attractions: Amusement and Theme Parks; Bars & Restaurants; Casinos & Gambling; Historic Site and Landmark
    Tours; Malls & Shopping Centers; Museums & Galleries; Nightclubs; Outdoor Activities; Parks & Nature;
    Theaters; Zoos & Aquariums
Automotive: Auto Body Styles; Auto Buying and Selling; Auto Insurance; Auto Parts; Auto Recalls; Auto Repair;
    Auto Safety; Auto Shows; Auto Technology; Auto Type; Car Culture; Dash Cam Videos; Motorcycles; Road-Side
    Assistance; Scooters
Books and Literature: Art and Photography Books; Biographies; Children's Literature; Comics and Graphic
    Novels; Cookbooks; Fiction; Poetry; Travel Books; Young Adult Literature
Business and Finance: Business; Economy; Industries; Small and Medium-sized Business
Careers: Apprenticeships; Career Advice; Career Planning; Job Search; Remote Working; Vocational Training
Education: Adult Education; College Education; Education industry; Homeschooling; Homework and Study; Language
    Learning; Online Education; Primary Education; Private School; Secondary Education; Special Education
Events and Attractions: Concerts & Music Events; Fan Conventions; Personal Celebrations & Life Events;
    Sporting Events; Theater Venues and Events
Family and Relationships: Bereavement; Dating; Divorce; Eldercare; Marriage and Civil Unions; Parenting;
    Remarriage; Single Life
Fine Art: Costume; Dance; Design; Digital Arts; Fine Art Photography; Modern Art; Opera; Theater
Food & Drink: Alcoholic Beverages; Barbecues and Grilling; Cooking; Desserts and Baking; Dining Out; Food
    Allergies; Food Movements; Healthy Cooking and Eating; Low Carb Diets; Non-Alcoholic Beverages; Vegan
    Diets; Vegetarian Diets; World Cuisines
Healthy Living: Children's Health; Fitness and Exercise; Men's Health; Nutrition; Senior Health; Wellness;
    Weight Loss; Women's Health; Smoking Cessation
Hobbies & Interests: Antiquing and Antiques; Arts and Crafts; Beekeeping; Birdwatching; Cigars; Collecting;
    Content Production; Games and Puzzles; Genealogy and Ancestry; Magic and Illusion; Model Toys; Musical
    Instruments; Paranormal Phenomena; Radio Control; Sci-fi and Fantasy; Workshops and Classes
Home & Garden: Gardening; Home Appliances; Home Entertaining; Home Improvement; Home Security; Indoor
    Environmental Quality; Interior Decorating; Landscaping; Outdoor Decorating; Remodeling & Construction;
    Smart Home
Medical Health: Diseases and Conditions; Medical Tests; Pharmaceutical Drugs; Surgery; Vaccines; Cosmetic
    Medical Services
Movies: Action and Adventure Movies; Animation Movies; Comedy Movies; Crime and Mystery Movies; Documentary
    Movies; Drama Movies; Family and Children Movies; Fantasy Movies; Horror Movies; Romance Movies; Science
    Fiction Movies
Music and Audio: Adult Contemporary Music; Classical Music; Country Music; Dance and Electronic Music; Hip Hop
    Music; Jazz; Pop Music; Rock Music; Talk Radio; World Music
News and Politics: Crime; Disasters; International News; Law; Local News; National News; Politics; Weather
Personal Finance: Consumer Banking; Financial Assistance; Financial Planning; Frugal Living; Insurance;
    Personal Debt; Personal Investing; Personal Taxes; Retirement Planning
Pets: Birds; Cats; Dogs; Fish and Aquariums; Large Animals; Pet Adoptions; Reptiles; Veterinary Medicine; Pet
    Supplies
Pop Culture: Celebrity Deaths; Celebrity Families; Celebrity Homes; Celebrity Pregnancy; Celebrity
    Relationships; Celebrity Scandal; Celebrity Style; Humor and Satire
Real Estate: Apartments; Retail Property; Vacation Properties; Developmental Sites; Hotel Properties; Houses;
    Industrial Property; Land and Farms; Office Property; Real Estate Buying and Selling; Real Estate Renting
    and Leasing
Religion & Spirituality: Agnosticism; Spirituality; Astrology; Atheism; Buddhism; Christianity; Hinduism;
    Islam; Judaism; Sikhism
Science: Biological Sciences; Chemistry; Environment; Genetics; Geography; Geology; Physics; Space and
    Astronomy
Shopping: Coupons and Discounts; Flower Shopping; Gifts and Greetings Cards; Grocery Shopping; Holiday
    Shopping; Household Supplies; Lotteries and Scratchcards; Sales and Promotions; Children's Games and Toys
Sports: American Football; Baseball; Basketball; Boxing; Cheerleading; College Sports; Cricket; Cycling;
    Darts; Disabled Sports; Diving; Equine Sports; Extreme Sports; Fantasy Sports; Field Hockey; Figure
    Skating; Fishing Sports; Golf; Gymnastics; Hunting and Shooting; Ice Hockey; Inline Skating; Lacrosse;
    Auto Racing; Martial Arts; Motorcycle Sports; Olympic Sports; Poker and Professional Gambling; Rodeo;
    Rowing; Rugby; Sailing; Skiing; Snooker/Pool/Billiards; Soccer; Softball; Squash; Surfing; Swimming; Table
    Tennis; Tennis; Track and Field; Volleyball; Walking; Water Polo; Weightlifting; Wrestling
Style & Fashion: Beauty; Body Art; Children's Clothing; Designer Clothing; Fashion Trends; High Fashion; Men's
    Fashion; Personal Care; Street Style; Women's Fashion
Technology & Computing: Artificial Intelligence; Augmented Reality; Computing; Consumer Electronics; Robotics;
    Virtual Reality
Television: Animation TV; Children's TV; Comedy TV; Drama TV; Factual TV; Holiday TV; Music TV; Reality TV;
    Science Fiction TV; Soap Opera TV; Special Interest TV; Sports TV
Travel: Travel Accessories; Travel Locations; Travel Preparation and Advice; Travel Type
Video Gaming: Console Games; eSports; Mobile Games; PC Games; Video Game Genres
"""


def topics() -> list[str]:
    """Each tier-2 name with its tier-1 name ("Pets: Dogs"); a line starting with spaces continues
    the one above it."""
    lines: list[str] = []
    for line in _TEXT.strip("\n").splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    out = []
    for line in lines:
        tier1, names = line.split(": ", 1)
        out += [f"{tier1}: {name.strip()}" for name in names.split(";")]
    return out
