"""Vocabulary the store seed composes its catalog, reviews and order comments from.

A product name is "{brand} {adjective} {noun}{variant}", e.g. "Hearthwell Nonstick Frying Pan, 10 Inch".
Each leaf category has brands and a few product kinds; a kind is one noun with its price range (USD),
the adjectives and name variants that make sense for it, and feature phrases for its description.
Kinds are written compactly with `kind()`: lists are "|"-separated strings, an empty variant is the
plain product, and "suffix:1.8" gives a variant a price factor (a 2-pack costs more than one).

Feature phrases complete "The <product> ..." and are written for a singular noun ("is", "has",
"removes"); the seed turns them plural for plural nouns ("Pens are ...").
Brands are invented so that no real company's products are misrepresented; device names in
accessory variants ("for iPhone 14") are kept because that is how such products are sold.
"""

from __future__ import annotations

from dataclasses import dataclass

# Option kinds: which "options" JSON a product gets (see seed._product_options).
APPAREL = "apparel"  # Size (XS..XXL) and Color
SHOES = "shoes"  # Size (US 6..12) and Color
COLOR = "color"  # Color only
METAL = "metal"  # Color from the metal finishes (jewelry)
NO_OPTIONS = ""

APPAREL_SIZES = ("XS", "S", "M", "L", "XL", "XXL")
SHOE_SIZES = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12")
COLORS = ("Black", "White", "Navy", "Gray", "Red", "Blue", "Green", "Beige",
          "Pink", "Purple", "Olive", "Burgundy", "Charcoal", "Teal", "Yellow", "Brown")  # fmt: skip
METALS = ("Gold", "Silver", "Rose Gold")


@dataclass(frozen=True)
class Kind:
    noun: str
    price: tuple[float, float]
    adjectives: tuple[str, ...]
    variants: tuple[tuple[str, float], ...]  # (name suffix, price factor)
    features: tuple[str, ...]
    options: str | None  # None: the leaf's option kind


@dataclass(frozen=True)
class Leaf:
    name: str
    brands: tuple[str, ...]
    kinds: tuple[Kind, ...]
    features: tuple[str, ...]  # fit every kind of the leaf
    options: str
    weight: tuple[float, float]  # shipping weight range in pounds


def kind(noun: str, low: float, high: float, adjectives: str, variants: str, features: str,
         options: str | None = None) -> Kind:  # fmt: skip
    def variant(text: str) -> tuple[str, float]:
        suffix, _, factor = text.partition(":")
        return suffix, float(factor or 1)

    return Kind(noun, (low, high), tuple(adjectives.split("|")), tuple(map(variant, variants.split("|"))),
                tuple(features.split("|")), options)  # fmt: skip


def leaf(name: str, brands: str, kinds: tuple[Kind, ...], features: str, options: str = NO_OPTIONS,
         weight: tuple[float, float] = (0.5, 3.0)) -> Leaf:  # fmt: skip
    return Leaf(name, tuple(brands.split("|")), kinds, tuple(features.split("|")), options, weight)


# Top-level categories in menu order, each with its leaf (sub)categories.
# fmt: off
CATALOG: tuple[tuple[str, tuple[Leaf, ...]], ...] = (
    ("Beauty & Personal Care", (
        leaf("Skin Care", "Lumora|Dermaveil|Petal & Pine|Aquaglow|Verdane", (
            kind("Facial Cleanser", 9, 28, "Gentle|Foaming|Hydrating|Oil-Free", "|, 5 fl oz|, 8 fl oz:1.4|, 2-Pack:1.8",
                 "removes makeup and impurities without stripping the skin|has a pH-balanced, soap-free formula"),
            kind("Face Serum", 15, 48, "Vitamin C|Hyaluronic Acid|Retinol|Niacinamide", "|, 1 fl oz|, 2 fl oz:1.7",
                 "brightens dull skin in as little as two weeks|comes with a glass dropper for precise application"),
            kind("Night Cream", 18, 55, "Anti-Aging|Firming|Retinol|Overnight Repair", "|, 1.7 oz|, 2-Pack:1.8",
                 "smooths the look of fine lines while you sleep|is rich but non-comedogenic"),
            kind("Moisturizer", 12, 40, "Daily|Oil-Free|Mineral SPF 30|Barrier Repair", "|, 1.7 fl oz|, 3.4 fl oz:1.5",
                 "absorbs quickly without a greasy feel|works well under makeup"),
            kind("Sheet Mask Set", 10, 25, "Hydrating|Brightening|Soothing|Variety", ", 10 Masks|, 20 Masks:1.8",
                 "soaks each mask in serum for a 15-minute spa treatment|is made from biodegradable plant fiber"),
            kind("Eye Cream", 16, 45, "Caffeine|Brightening|Depuffing|Peptide", "|, 0.5 fl oz",
                 "reduces puffiness and dark circles|has a cooling metal applicator tip"),
        ), "is free of parabens, sulfates and artificial fragrance|is dermatologist tested and suitable for sensitive skin"
           "|is cruelty-free and never tested on animals", weight=(0.2, 0.8)),
        leaf("Hair Care", "Silkroot|Mane Theory|Coastal Curl|Verdane", (
            kind("Shampoo", 8, 24, "Argan Oil|Volumizing|Clarifying|Color-Safe|Moisturizing", "|, 12 fl oz|, 33.8 fl oz:2.1",
                 "lathers richly and rinses clean without weighing hair down|is safe for color-treated and keratin-treated hair"),
            kind("Conditioner", 8, 24, "Argan Oil|Volumizing|Repairing|Color-Safe|Moisturizing", "|, 12 fl oz|, 33.8 fl oz:2.1",
                 "detangles instantly and leaves hair soft|seals split ends with plant-based proteins"),
            kind("Hair Mask", 12, 32, "Deep Repair|Argan Oil|Bond-Building|Hydrating", "|, 8.5 oz",
                 "restores damaged hair in a single 5-minute treatment|can be used weekly or as an overnight mask"),
            kind("Leave-In Conditioner Spray", 10, 26, "Detangling|Heat Protectant|Curl-Defining|Lightweight",
                 "|, 8 fl oz|, 2-Pack:1.8", "protects hair from heat styling up to 450°F|controls frizz for up to 72 hours"),
            kind("Hair Dryer", 30, 120, "Ionic|Compact|Professional|Ceramic", "| with Diffuser:1.15",
                 "dries hair up to 50% faster with less heat damage|has three heat and two speed settings", COLOR),
            kind("Shampoo and Conditioner Set", 16, 42, "Argan Oil|Volumizing|Sulfate-Free|Tea Tree", "|, 2 x 16 fl oz:1.2",
                 "cleanses and conditions without stripping natural oils|has a light citrus and vanilla scent"),
        ), "is loved by stylists and everyday users alike|is backed by a 90-day satisfaction guarantee", weight=(0.5, 2.5)),
        leaf("Makeup", "Rouge Atelier|Bloomline|Lumora|Nudista", (
            kind("Liquid Lipstick", 7, 22, "Matte|Long-Wear|Satin|Velvet", "|, 2-Pack:1.8",
                 "stays put for up to 16 hours without drying lips|glides on smoothly with a doe-foot applicator", COLOR),
            kind("Mascara", 6, 24, "Volumizing|Lengthening|Waterproof|Curl-Lifting", "|, 2-Pack:1.8",
                 "builds dramatic volume without clumping|is ophthalmologist tested and safe for contact lens wearers"),
            kind("Eyeshadow Palette", 12, 45, "Neutral|Shimmer|Matte|Sunset", "|, 18 Shades:1.3",
                 "blends easily with rich, buildable pigment|includes a full-size mirror"),
            kind("Foundation", 10, 38, "Full Coverage|Matte|Dewy|Lightweight", "|, 1 fl oz",
                 "builds from medium to full coverage|controls shine for up to 24 hours"),
            kind("Setting Powder", 9, 30, "Translucent|Loose|Pressed|Blurring", "",
                 "locks makeup in place all day|blurs the look of pores and fine lines"),
            kind("Makeup Brush Set", 10, 35, "Professional|Vegan|Travel|Synthetic", "|, 12-Piece:1.3|, 5-Piece:0.8",
                 "has ultra-soft synthetic bristles|comes in a zippered travel pouch"),
        ), "is vegan and cruelty-free|is a bestseller with professional makeup artists", weight=(0.1, 0.5)),
        leaf("Oral Care", "BrightBite|Oralis|Mintwell|Smile Harbor", (
            kind("Electric Toothbrush", 25, 90, "Sonic|Rechargeable|Whitening|Travel", "|, 2-Pack:1.8| with 4 Brush Heads:1.2",
                 "removes up to 10x more plaque than a manual toothbrush|has a built-in two-minute timer"
                 "|lasts up to 30 days on a single charge", COLOR),
            kind("Toothpaste", 4, 12, "Whitening|Sensitive|Charcoal|Fluoride-Free|Enamel Repair", "|, 4.1 oz|, 3-Pack:2.6",
                 "strengthens enamel and fights cavities|lifts surface stains gently"),
            kind("Water Flosser", 30, 80, "Cordless|Countertop|Portable|Rechargeable", "",
                 "removes up to 99.9% of plaque from treated areas|has three pressure modes and five tips"),
            kind("Replacement Brush Heads", 10, 28, "Sensitive|Whitening|Deep Clean", ", 4-Pack|, 8-Pack:1.8",
                 "fits all major sonic toothbrush handles|has bristles that fade when it is time to replace them"),
            kind("Mouthwash", 5, 14, "Antiseptic|Alcohol-Free|Whitening|Fresh Mint", "|, 2-Pack:1.8",
                 "kills germs that cause bad breath|freshens breath for up to 12 hours"),
            kind("Floss Picks", 3, 9, "Mint|Charcoal|Extra Strong|Kids", ", 150 Count|, 300 Count:1.7",
                 "slides easily between tight teeth|has a built-in toothpick on the handle"),
        ), "is recommended by dentists|is made with plant-based, ADA-accepted materials", weight=(0.2, 1.5)),
    )),
    ("Sports & Outdoors", (
        leaf("Exercise & Fitness", "IronPeak|FlexForm|CoreNation|Pulsefit", (
            kind("Yoga Mat", 18, 60, "Non-Slip|Extra Thick|Eco-Friendly|Alignment", "| with Carrying Strap:1.15|, 1/2 Inch:1.1",
                 "is made from latex-free, eco-friendly TPE|has a textured surface that grips even during sweaty workouts",
                 COLOR),
            kind("Dumbbell Set", 40, 220, "Adjustable|Neoprene|Hex Rubber|Chrome", "|, 20 lb:0.6|, 50 lb:1.3",
                 "switches weights in seconds with a selector dial|has knurled, ergonomic handles for a secure grip"),
            kind("Resistance Bands", 12, 35, "Heavy-Duty|Fabric|Latex-Free|Loop", ", Set of 5|, Set of 3:0.7",
                 "offers five resistance levels from 10 to 50 lbs|comes with a door anchor and ankle straps"),
            kind("Jump Rope", 8, 25, "Speed|Weighted|Tangle-Free|Adjustable", "",
                 "has ball-bearing handles for smooth, fast spins|adjusts to any height in seconds"),
            kind("Foam Roller", 15, 40, "High-Density|Textured|Vibrating|Travel", "|, 18 Inch|, 36 Inch:1.3",
                 "relieves muscle tightness after workouts|keeps its shape after hundreds of uses"),
            kind("Kettlebell", 25, 90, "Cast Iron|Vinyl Coated|Competition|Adjustable", ", 15 lb:0.8|, 25 lb|, 35 lb:1.3",
                 "is cast from a single piece of solid iron|has a wide, smooth handle for two-handed swings"),
            kind("Pull-Up Bar", 22, 60, "Doorway|Heavy-Duty|Multi-Grip|No-Screw", "",
                 "fits doorways from 24 to 36 inches wide|supports up to 300 lbs"),
        ), "includes access to 30 free follow-along workout videos|is backed by a lifetime replacement guarantee",
            weight=(1.0, 25.0)),
        leaf("Camping & Hiking", "TrailForge|Summit Ridge|Northbound|Canyon Crest", (
            kind("Camping Tent", 60, 260, "Waterproof|Instant|Backpacking|4-Season", ", 2-Person|, 4-Person:1.5|, 6-Person:2",
                 "sets up in under five minutes with color-coded poles|has fully taped seams and a rainfly that keeps you dry"),
            kind("Sleeping Bag", 35, 140, "Mummy|Rectangular|Ultralight|Insulated", "|, 20°F|, 0°F:1.4",
                 "keeps you warm on nights down to 20°F|compresses into the included stuff sack"),
            kind("Hiking Backpack", 45, 160, "Ultralight|Waterproof|Internal Frame|Daypack", ", 40L|, 65L:1.4|, 25L:0.7",
                 "has an adjustable torso and padded hip belt|includes a built-in rain cover", COLOR),
            kind("Headlamp", 12, 40, "LED|Rechargeable|Waterproof|Motion Sensor", "|, 2-Pack:1.7",
                 "throws a 1,000-lumen beam up to 200 meters|runs up to 40 hours on a single USB-C charge"),
            kind("Camping Lantern", 18, 50, "LED|Rechargeable|Collapsible|Solar", "|, 2-Pack:1.7",
                 "lights a whole campsite with 360-degree light|doubles as a power bank for your phone"),
            kind("Trekking Poles", 25, 80, "Collapsible|Carbon Fiber|Aluminum|Ultralight", "",
                 "has quick-lock adjustment from 24 to 54 inches|has cork grips that stay comfortable in the heat"),
            kind("Water Bottle", 15, 40, "Insulated|Stainless Steel|Leakproof|Wide Mouth", ", 24 oz|, 32 oz:1.15|, 40 oz:1.3",
                 "keeps drinks cold for 24 hours and hot for 12|has a leakproof lid with a carry loop", COLOR),
        ), "is field tested in the Rocky Mountains|is backed by a 2-year warranty", weight=(0.4, 12.0)),
        leaf("Cycling", "Velocita|Spokewise|Roadrunner Gear", (
            kind("Bike Helmet", 30, 120, "Lightweight|MIPS|Aero|Commuter", "| with LED Taillight:1.2",
                 "meets CPSC safety standards for adults|has 18 vents that keep your head cool", COLOR),
            kind("Bike Lock", 18, 70, "Anti-Theft|Heavy-Duty|Folding|Combination", "| with Mounting Bracket:1.15",
                 "uses a hardened steel shackle that resists bolt cutters|comes with three keys"),
            kind("Bike Light Set", 15, 45, "Rechargeable|LED|Ultra-Bright|Smart", "",
                 "is visible from up to 1,000 feet at night|mounts without tools in seconds"),
            kind("Cycling Gloves", 12, 35, "Padded|Half-Finger|Full-Finger|Breathable", "",
                 "has gel padding that reduces hand fatigue|has touchscreen-compatible fingertips", APPAREL),
            kind("Bike Phone Mount", 10, 30, "Universal|Shockproof|Quick-Release|Waterproof", "",
                 "fits phones from 4.7 to 6.8 inches|rotates 360 degrees for portrait or landscape"),
            kind("Bike Saddle", 20, 60, "Comfort|Gel|Memory Foam|Racing", "",
                 "has a center cutout that relieves pressure|fits all standard seat posts"),
        ), "is loved by commuters and weekend riders alike|comes with a 1-year warranty", weight=(0.3, 3.5)),
    )),
    ("Clothing, Shoes & Jewelry", (
        leaf("Women's Clothing", "Marlow & Finch|Sundae Lane|Aveline|Cotton Cove", (
            kind("Maxi Dress", 28, 70, "Floral|Wrap|Boho|Sleeveless|Casual", "|, Short Sleeve",
                 "has a flowing A-line silhouette|has hidden side pockets deep enough for a phone"),
            kind("Cardigan Sweater", 25, 60, "Oversized|Cable Knit|Cropped|Lightweight", "",
                 "is knit from a soft, non-itchy yarn|has a relaxed, open-front drape"),
            kind("Yoga Leggings", 18, 45, "High-Waisted|Buttery Soft|Squat-Proof|Fleece-Lined", "| with Pockets:1.1",
                 "has a four-way stretch fabric that moves with you|has a wide waistband that stays put"),
            kind("Button-Down Blouse", 20, 48, "Linen|Chiffon|Classic|Satin", "",
                 "is lightweight and breathable|transitions easily from office to evening"),
            kind("Denim Jacket", 35, 80, "Classic|Distressed|Cropped|Oversized", "",
                 "is made from soft, pre-washed denim|has two chest and two side pockets"),
            kind("T-Shirt", 10, 25, "Crewneck|V-Neck|Oversized|Ribbed", "|, 3-Pack:2.4",
                 "is made from a soft, breathable cotton blend|is tagless to prevent itching"),
            kind("Pajama Set", 22, 50, "Cozy|Silky Satin|Flannel|Short Sleeve", "",
                 "has a drawstring waist and relaxed fit|gets softer with every wash"),
        ), "is machine washable and colorfast|is true to size; see the size chart for details",
            APPAREL, (0.3, 1.5)),
        leaf("Men's Clothing", "Hadley & Co.|Northwind|Grayson Supply|Cotton Cove", (
            kind("Polo Shirt", 18, 40, "Classic Fit|Slim Fit|Performance|Pique", "|, 2-Pack:1.8",
                 "wicks moisture and dries quickly|has a ribbed collar that holds its shape"),
            kind("Chino Pants", 28, 55, "Slim Fit|Straight Fit|Stretch|Relaxed Fit", "",
                 "is cut from stretch cotton twill|has a hidden coin pocket"),
            kind("Hoodie", 25, 55, "Pullover|Full-Zip|Heavyweight|Fleece", "",
                 "is lined with brushed fleece for warmth|has a kangaroo pocket and adjustable hood"),
            kind("Oxford Shirt", 24, 50, "Classic Fit|Slim Fit|Wrinkle-Free|Button-Down", "",
                 "is wrinkle resistant and ready to wear out of the dryer|has a tailored cut that is not too tight"),
            kind("Athletic Shorts", 15, 32, "Quick-Dry|Running|Training|Lightweight", "|, 2-Pack:1.8",
                 "has a built-in liner and zippered pocket|is made of a lightweight, quick-dry fabric"),
            kind("Fleece Jacket", 35, 75, "Full-Zip|Polar|Sherpa-Lined|Lightweight", "",
                 "traps heat without bulk|has zippered hand pockets"),
            kind("Crew Socks", 10, 22, "Cushioned|Athletic|Merino Wool|Moisture-Wicking", ", 6-Pack|, 12-Pack:1.7",
                 "has a cushioned sole and reinforced heel|stays up all day without slipping"),
        ), "is machine washable and fade resistant|features reinforced seams for long-lasting wear", APPAREL, (0.3, 2.0)),
        leaf("Shoes", "Stridewell|Cloudstep|Trailmark|Urban Sole", (
            kind("Running Shoes", 45, 130, "Lightweight|Cushioned|Trail|Breathable", "| for Women| for Men",
                 "has a responsive foam midsole that returns energy|has a breathable knit upper"),
            kind("Walking Sneakers", 40, 95, "Memory Foam|Slip-On|Arch Support|Wide", "| for Women| for Men",
                 "has a memory foam insole that cushions every step|slips on and off without laces"),
            kind("Hiking Boots", 70, 160, "Waterproof|Mid-Cut|Lightweight|Insulated", "| for Women| for Men",
                 "is sealed with a waterproof, breathable membrane|has a lugged outsole for grip on rocky trails"),
            kind("Ankle Boots", 55, 120, "Chelsea|Leather|Block Heel|Suede", "| for Women",
                 "has elastic side panels for easy on and off|has a cushioned footbed"),
            kind("Slide Sandals", 18, 45, "Cushioned|Pillow|Adjustable|Waterproof", "| for Women| for Men",
                 "is molded from soft, quick-drying EVA|has a textured footbed that prevents slipping"),
            kind("Canvas Sneakers", 30, 65, "Classic|Low-Top|High-Top|Platform", "| for Women| for Men",
                 "has a durable canvas upper and rubber toe cap|pairs with jeans, shorts or dresses"),
        ), "has a slip-resistant rubber outsole|is true to size; order a half size up for wide feet", SHOES, (1.0, 3.5)),
        leaf("Jewelry", "Aurelia|Moonstone & Co.|Lune Atelier", (
            kind("Pendant Necklace", 20, 90, "Dainty|Heart|Initial|Birthstone|Layered", "| in Gift Box:1.1",
                 "has an adjustable chain from 16 to 18 inches|is set with hand-polished cubic zirconia"),
            kind("Hoop Earrings", 15, 60, "Chunky|Huggie|Twisted|Lightweight", "|, 3 Pairs:1.6",
                 "is light enough to wear all day|closes with a secure hinged clasp"),
            kind("Charm Bracelet", 18, 75, "Adjustable|Beaded|Personalized|Dainty", "",
                 "has a sliding clasp that fits most wrists|comes with five interchangeable charms"),
            kind("Stackable Rings Set", 14, 45, "Minimalist|Vintage|Dainty|Sparkling", "",
                 "includes seven rings in three textures|can be worn together or one at a time"),
            kind("Stud Earrings", 12, 50, "Cubic Zirconia|Pearl|Minimalist|Hypoallergenic", "|, 6 Pairs:1.7",
                 "has hypoallergenic posts safe for sensitive ears|has secure push-back closures"),
            kind("Cuff Bracelet", 20, 65, "Open|Hammered|Engraved|Minimalist", "",
                 "bends gently for a custom fit|is polished to a mirror shine"),
        ), "is plated in 14k gold or rhodium over nickel-free brass|resists tarnishing with a protective e-coat"
           "|arrives in a velvet gift pouch", METAL, (0.05, 0.3)),
    )),
    ("Home & Kitchen", (
        leaf("Kitchen & Dining", "Hearthwell|Copper Creek|Kitchara|Oak & Ember|Platewise", (
            kind("Frying Pan", 20, 65, "Nonstick|Cast Iron|Stainless Steel|Ceramic", ", 8 Inch:0.8|, 10 Inch|, 12 Inch:1.25",
                 "heats evenly with no hot spots|is oven safe up to 500°F|works on gas, electric and induction cooktops"),
            kind("Cookware Set", 90, 280, "Nonstick|Stainless Steel|Ceramic|Hard-Anodized", ", 10-Piece|, 12-Piece:1.2|, 8-Piece:0.85",
                 "includes pots, pans and tempered glass lids|has riveted, stay-cool handles"),
            kind("Chef's Knife", 25, 110, "Professional|Damascus|High-Carbon|Japanese", ", 8 Inch| with Sheath:1.1",
                 "is forged from high-carbon German steel|holds a razor-sharp edge for months"),
            kind("Cutting Board", 14, 45, "Bamboo|Acacia Wood|Non-Slip|Reversible", "|, Set of 3:1.6",
                 "has a deep juice groove that catches drips|is gentle on knife edges"),
            kind("Food Storage Containers", 18, 45, "Glass|Airtight|Stackable|Meal Prep", ", 10-Pack|, 24-Piece:1.4",
                 "has airtight snap-lock lids that prevent leaks|is microwave, freezer and oven safe"),
            kind("Dutch Oven", 45, 150, "Enameled Cast Iron|Ceramic|Pre-Seasoned", ", 5.5 Quart|, 7 Quart:1.2",
                 "holds heat for perfect braises and bread|is oven safe up to 500°F", COLOR),
            kind("French Press", 18, 45, "Stainless Steel|Glass|Insulated", ", 34 oz|, 12 oz:0.7",
                 "brews rich coffee in four minutes|has a four-level filter that keeps grounds out of your cup"),
            kind("Dinnerware Set", 40, 130, "Stoneware|Porcelain|Modern|Speckled", ", Service for 4|, 16-Piece:1.1|, Service for 8:1.7",
                 "is chip resistant for everyday use|is microwave and dishwasher safe"),
        ), "comes with a lifetime warranty against defects|is a favorite of home cooks and professional chefs",
            weight=(0.5, 15.0)),
        leaf("Bedding", "Dreamhaven|Linen & Loom|Cloudrest|Cotton Cove", (
            kind("Sheet Set", 25, 90, "Luxury|Cooling|Microfiber|Egyptian Cotton|Bamboo", ", Queen|, King:1.2|, Twin:0.8|, Full:0.9",
                 "has deep pockets that fit mattresses up to 16 inches|is woven from long-staple fibers for a silky feel"),
            kind("Duvet Cover Set", 35, 110, "Washed Cotton|Linen|Microfiber|Waffle Weave", ", Queen|, King:1.2",
                 "has corner ties that keep the insert in place|closes with a hidden zipper"),
            kind("Comforter", 40, 130, "Down Alternative|All-Season|Lightweight|Quilted", ", Queen|, King:1.2|, Twin:0.8",
                 "is filled with hypoallergenic down alternative|has box stitching that keeps the fill evenly spread"),
            kind("Bed Pillows", 25, 70, "Cooling|Shredded Memory Foam|Down Alternative|Adjustable", ", Set of 2|, Queen Size:0.6",
                 "supports back, side and stomach sleepers|has an adjustable fill you can add or remove"),
            kind("Mattress Topper", 45, 160, "Memory Foam|Cooling Gel|Bamboo|Plush", ", Queen|, King:1.2|, Twin:0.75",
                 "adds three inches of pressure-relieving comfort|has an elastic skirt that stays put", NO_OPTIONS),
            kind("Weighted Blanket", 40, 120, "Cooling|Cozy|Knitted|Glass Bead", ", 15 lb|, 20 lb:1.2",
                 "calms the body for deeper sleep|distributes weight evenly with small pockets"),
        ), "is OEKO-TEX certified free of harmful substances|gets softer with every wash", COLOR, (1.0, 15.0)),
        leaf("Home Decor", "Willow & Wren|Casa Lumen|Nordic Nest|Hearthwell", (
            kind("Throw Pillow Covers", 12, 30, "Boho|Velvet|Farmhouse|Linen", ", 18 x 18 Inch, Set of 2|, 20 x 20 Inch, Set of 4:1.6",
                 "has a hidden zipper for easy removal|is woven with a soft, textured finish", COLOR),
            kind("Wall Mirror", 35, 140, "Round|Arched|Rustic|Modern", "|, 24 Inch|, 36 Inch:1.5",
                 "comes with all the hardware needed for hanging|has a shatter-resistant glass front"),
            kind("Scented Candle", 10, 32, "Soy Wax|Lavender|Vanilla|Sandalwood", "|, 3-Wick:1.5|, Set of 3:2",
                 "is poured from natural soy wax with a cotton wick|burns cleanly for up to 50 hours"),
            kind("Picture Frame Set", 18, 55, "Gallery Wall|Rustic|Modern|Black", ", 7-Piece|, 10-Piece:1.3",
                 "includes frames in 8x10, 5x7 and 4x6 sizes|hangs vertically or horizontally"),
            kind("Ceramic Vase", 15, 48, "Modern|Boho|Handmade|Matte", "|, Set of 3:1.8",
                 "is glazed by hand so no two are alike|is watertight for fresh flowers"),
            kind("Artificial Plant", 16, 60, "Fiddle Leaf Fig|Monstera|Olive Tree|Eucalyptus", ", 3 ft|, 5 ft:1.6",
                 "looks real from every angle|needs no water, sunlight or care"),
            kind("Area Rug", 45, 220, "Boho|Washable|Moroccan|Shag", ", 5 x 7 ft|, 8 x 10 ft:1.8",
                 "has a non-slip backing and is machine washable|has a low pile that fits under doors"),
        ), "adds a warm accent to any room|is made from sustainably sourced materials", weight=(0.5, 12.0)),
        leaf("Storage & Organization", "Tidyhaus|Stackwell|Nordic Nest", (
            kind("Storage Bins", 15, 40, "Stackable|Collapsible|Clear|Fabric", ", Set of 3|, 6-Pack:1.7",
                 "folds flat when not in use|has reinforced handles for easy carrying"),
            kind("Closet Organizer", 25, 80, "Hanging|Expandable|5-Shelf|Heavy-Duty", "",
                 "fits standard closet rods|assembles in minutes without tools"),
            kind("Shoe Rack", 20, 60, "4-Tier|Stackable|Bamboo|Over-the-Door", "",
                 "holds up to 24 pairs of shoes|assembles in minutes without tools"),
            kind("Drawer Dividers", 10, 28, "Adjustable|Bamboo|Spring-Loaded", ", 4-Pack|, 6-Pack:1.3",
                 "expands to fit drawers 17 to 22 inches wide|has foam edges that protect drawers"),
            kind("Storage Baskets", 18, 45, "Woven|Seagrass|Cotton Rope|Wire", ", Set of 3|, Set of 2:0.75",
                 "has sturdy built-in handles|adds a natural texture to shelves"),
            kind("Under-Bed Storage Bag", 15, 35, "Zippered|Foldable|Clear Window", ", 2-Pack|, 4-Pack:1.7",
                 "slides under beds with 6 inches of clearance|has a clear window so you can see what is inside"),
        ), "helps you reclaim space in any room|is backed by a 1-year warranty", weight=(0.8, 8.0)),
    )),
    ("Office Products", (
        leaf("Office & School Supplies", "Inkwell|Paperlane|Scriptora|Deskmate", (
            kind("Pens", 6, 18, "Gel|Ballpoint|Fine Point|Retractable", ", 12-Pack|, 24-Pack:1.7|, Assorted Colors:1.1",
                 "writes smoothly with quick-drying, smear-proof ink|has a soft rubber grip"),
            kind("Notebooks", 8, 24, "Spiral|College Ruled|Dotted|Hardcover", ", 3-Pack|, 5-Pack:1.5",
                 "has 160 pages of thick, bleed-resistant paper|has perforated pages that tear out cleanly"),
            kind("Sticky Notes", 5, 15, "Bright|Super Sticky|Pastel|Lined", ", 12 Pads|, 24 Pads:1.7",
                 "peels off cleanly without leaving residue|has 100 sheets per pad"),
            kind("Stapler", 9, 28, "Heavy-Duty|Desktop|Electric|Spring-Powered", "| with 1000 Staples:1.15",
                 "staples up to 25 sheets without jamming|has a non-skid rubber base"),
            kind("Highlighters", 5, 14, "Chisel Tip|Pastel|Fluorescent|Dual Tip", ", 12-Pack|, 6-Pack:0.6",
                 "dries quickly without smearing printed text|glides smoothly without bleeding through paper"),
            kind("File Folders", 8, 22, "Letter Size|Colored|Hanging|Expanding", ", 25-Pack|, 50-Pack:1.6",
                 "is made from durable 11-point stock|has reinforced tabs that resist tearing"),
            kind("Desk Organizer", 14, 35, "Mesh|Bamboo|Rotating|Multi-Compartment", "",
                 "keeps pens, clips and notes within reach|has a sliding drawer for small items"),
        ), "is made with at least 30% recycled content|is great for home, school and the office", weight=(0.2, 2.5)),
        leaf("Office Furniture", "Ergolux|Workwell|Deskmate|Oak & Ember", (
            kind("Office Chair", 90, 320, "Ergonomic|Mesh|Executive|Big and Tall", "| with Lumbar Support:1.15| with Headrest:1.2",
                 "supports up to 300 lbs with a reinforced steel base|has adjustable armrests and seat height", COLOR),
            kind("Standing Desk", 180, 520, "Electric|Height-Adjustable|Dual Motor|L-Shaped", ", 48 x 24 Inch|, 55 x 28 Inch:1.15",
                 "adjusts from 28 to 46 inches at the push of a button|remembers four height presets"),
            kind("Computer Desk", 80, 260, "Modern|L-Shaped|Compact|Industrial", "| with Drawers:1.2| with Storage Shelves:1.1",
                 "has a scratch-resistant, water-resistant surface|assembles in about 20 minutes"),
            kind("Filing Cabinet", 60, 180, "Mobile|Lateral|Locking|3-Drawer", "",
                 "locks to keep documents secure|rolls on casters that lock in place"),
            kind("Footrest", 20, 55, "Ergonomic|Adjustable|Memory Foam|Rocking", "",
                 "tilts to relieve pressure on your legs|has a washable velvet cover"),
            kind("Monitor Stand", 25, 70, "Wooden|Adjustable|Dual|Metal", "| with Drawer:1.2",
                 "raises your screen to eye level|has space underneath for a keyboard"),
        ), "comes with all tools needed for assembly|is backed by a 5-year limited warranty", weight=(5.0, 80.0)),
        leaf("Office Electronics", "Printwise|Clarity Tech|Deskmate", (
            kind("Laser Printer", 110, 320, "Wireless|Monochrome|Color|All-in-One", "",
                 "prints up to 30 pages per minute|prints double-sided automatically"),
            kind("Label Maker", 25, 70, "Portable|Bluetooth|Handheld|Thermal", "| with 3 Tape Cassettes:1.2",
                 "prints crisp labels from your phone|needs no ink or toner"),
            kind("Paper Shredder", 40, 150, "Cross-Cut|Micro-Cut|Heavy-Duty|Quiet", ", 8-Sheet:0.8|, 12-Sheet|, 16-Sheet:1.4",
                 "turns documents into confetti-size pieces|has an auto-reverse that clears jams"),
            kind("Document Scanner", 90, 280, "Portable|Duplex|High-Speed|Wireless", "",
                 "scans double-sided documents in a single pass|saves searchable PDFs directly to the cloud"),
            kind("Laminator", 25, 60, "Thermal|Compact|Personal|Fast-Warm-Up", "| with 50 Pouches:1.2",
                 "warms up in under three minutes|handles documents up to 9 inches wide"),
            kind("Calculator", 10, 30, "Desktop|Scientific|Printing|Solar", "",
                 "has a large, tilted display|runs on solar and battery power"),
        ), "is Energy Star certified|comes with a 1-year warranty and free phone support", weight=(1.0, 25.0)),
    )),
    ("Tools & Home Improvement", (
        leaf("Power Tools", "Voltforge|Torqmaster|BuildRight|Ironclad", (
            kind("Drill Driver", 60, 180, "Cordless|Brushless|20V|Compact", "| Kit with Battery and Charger:1.4|, Tool Only:0.75",
                 "delivers up to 500 in-lbs of torque|has a keyless chuck for quick bit changes"),
            kind("Impact Driver", 70, 190, "Cordless|Brushless|20V|Compact", "| Kit with Battery and Charger:1.4|, Tool Only:0.75",
                 "drives long screws into hardwood with ease|has three speed settings for precise control"),
            kind("Circular Saw", 80, 200, "Cordless|Corded|Brushless|Compact", "|, 7-1/4 Inch",
                 "cuts 2x lumber in a single pass|has an electric brake that stops the blade quickly"),
            kind("Orbital Sander", 40, 110, "Random|Variable-Speed|Cordless|Palm", "| with 50 Sanding Discs:1.2",
                 "leaves a swirl-free finish|has a dust bag that keeps your workspace clean"),
            kind("Jigsaw", 50, 140, "Cordless|Orbital|Variable-Speed|Compact", "",
                 "cuts curves in wood, metal and plastic|changes blades without tools"),
            kind("Oscillating Multi-Tool", 45, 130, "Cordless|Brushless|Quick-Change|Corded", "| with 30 Accessories:1.3",
                 "sands, cuts and scrapes with one tool|changes accessories without tools"),
        ), "has a built-in LED light to illuminate the work area|comes with a 3-year limited warranty", weight=(2.0, 10.0)),
        leaf("Hand Tools", "Ironclad|BuildRight|Grip & Turn", (
            kind("Screwdriver Set", 15, 45, "Magnetic|Precision|Ratcheting|Insulated", ", 8-Piece|, 20-Piece:1.5",
                 "has magnetic tips that hold screws in place|has cushioned, non-slip grips"),
            kind("Socket Set", 30, 120, "Mechanics|Metric and SAE|Impact|1/2-Inch Drive", ", 40-Piece|, 108-Piece:1.8",
                 "is forged from hardened chrome vanadium steel|includes a sturdy blow-molded storage case"),
            kind("Tape Measure", 8, 25, "Magnetic|Self-Locking|Heavy-Duty|Compact", ", 25 ft|, 16 ft:0.8|, 35 ft:1.3",
                 "has a wide blade that stands out to 11 feet|has a magnetic hook for one-person measuring"),
            kind("Claw Hammer", 12, 35, "Fiberglass|Steel|Anti-Vibration|Framing", ", 16 oz|, 20 oz:1.15",
                 "has a shock-absorbing grip|has a magnetic nail starter"),
            kind("Adjustable Wrench", 10, 30, "Wide Jaw|Chrome|Locking|Heavy-Duty", ", 8 Inch|, 10 Inch:1.2|, 3-Piece Set:1.9",
                 "has a precision worm gear that holds its setting|opens wide enough for 1-1/2 inch nuts"),
            kind("Pliers Set", 18, 50, "Professional|Insulated|Locking|Needle Nose", ", 5-Piece|, 7-Piece:1.3",
                 "has induction-hardened cutting edges|has comfortable, non-slip handles"),
            kind("Tool Box", 25, 90, "Rolling|Metal|Portable|Stackable", ", 19 Inch|, 22 Inch:1.2",
                 "has a removable tray for small parts|locks with a padlock eye"),
        ), "meets or exceeds ANSI specifications|is backed by a lifetime warranty", weight=(0.5, 15.0)),
        leaf("Lighting", "Lumenhaus|Brightside|Casa Lumen", (
            kind("LED Light Bulbs", 8, 30, "Dimmable|Smart|Daylight|Soft White|Vintage Edison", ", 4-Pack|, 12-Pack:2.2|, 2-Pack:0.6",
                 "uses 85% less energy than incandescent bulbs|is rated for 25,000 hours of use"),
            kind("Ceiling Light Fixture", 35, 120, "Flush Mount|Modern|Farmhouse|Dimmable", "|, 2-Pack:1.8",
                 "installs in minutes with a quick-connect plate|spreads soft, even light across the room"),
            kind("Under Cabinet Lights", 20, 55, "Motion-Sensing|Rechargeable|Plug-In|Dimmable", ", 3-Pack|, 6-Pack:1.7",
                 "turns on automatically when motion is detected|sticks on with magnets, no wiring needed"),
            kind("Floor Lamp", 40, 130, "Modern|Arc|Dimmable|Tree", "",
                 "has a foot switch and a weighted base|offers warm, neutral and daylight color temperatures"),
            kind("Desk Lamp", 18, 50, "LED|Dimmable|Architect|Clamp", "| with USB Charging Port:1.15",
                 "has five brightness levels and three color modes|has a flexible gooseneck that points light where you need it"),
            kind("Outdoor Flood Light", 25, 80, "Solar|Motion-Sensing|Waterproof|LED", ", 2-Pack|, 4-Pack:1.7",
                 "is waterproof to IP65|lights up 30 feet of yard"),
            kind("LED Strip Lights", 12, 35, "Smart|Color-Changing|Music Sync|Dimmable", ", 16.4 ft|, 32.8 ft:1.6|, 50 ft:2.1",
                 "works with Alexa and Google Assistant|syncs colors to your music"),
        ), "is UL listed for safety|comes with a 2-year warranty", weight=(0.3, 12.0)),
    )),
    ("Health & Household", (
        leaf("Vitamins & Supplements", "Vitalis|Pure Harbor|NutraBloom|Greenfield Naturals", (
            kind("Multivitamin", 10, 32, "Women's|Men's|Gummy|Whole Food", ", 60 Count|, 120 Count:1.7",
                 "provides 23 essential vitamins and minerals|is easy on the stomach"),
            kind("Vitamin D3", 8, 22, "High Potency|Softgel|Gummy|Liquid", ", 5000 IU, 120 Count|, 2000 IU, 90 Count:0.8",
                 "supports healthy bones and immune function|has olive oil for better absorption"),
            kind("Fish Oil Omega-3", 14, 38, "Triple Strength|Burpless|Wild Alaskan|Lemon-Flavored", ", 90 Softgels|, 180 Softgels:1.7",
                 "delivers 1,400 mg of EPA and DHA per serving|has no fishy aftertaste"),
            kind("Probiotic", 18, 45, "Daily|Women's|50 Billion CFU|Shelf-Stable", ", 30 Capsules|, 60 Capsules:1.7",
                 "contains ten clinically studied strains|needs no refrigeration"),
            kind("Magnesium Glycinate", 12, 30, "High Absorption|Chelated|Gentle", ", 120 Capsules|, 240 Capsules:1.7",
                 "supports relaxation and restful sleep|is gentle on the stomach"),
            kind("Collagen Peptides", 20, 48, "Unflavored|Grass-Fed|Vanilla|Chocolate", ", 10 oz|, 20 oz:1.7",
                 "dissolves easily in hot or cold drinks|provides 20 grams of protein per serving"),
            kind("Elderberry Gummies", 12, 28, "Organic|Immune Support|Sugar-Free|Kids", ", 60 Count|, 120 Count:1.7",
                 "supports immune health with vitamin C and zinc|tastes like fresh berries"),
        ), "is third-party tested for purity and potency|is non-GMO, gluten-free and made without artificial colors"
           "|is manufactured in a cGMP-certified facility", weight=(0.2, 1.5)),
        leaf("Household Supplies", "Freshnest|Clearview|Greenfield Naturals|Tidyhaus", (
            kind("Dish Soap", 4, 14, "Ultra|Plant-Based|Lemon-Scented|Fragrance-Free", "|, 3-Pack:2.4",
                 "cuts through grease on the first wipe|is gentle on hands"),
            kind("Laundry Detergent Pods", 12, 30, "Free & Clear|Ultra|Plant-Based|Spring Scent", ", 42 Count|, 81 Count:1.7",
                 "dissolves completely in hot and cold water|removes tough stains in one wash"),
            kind("Paper Towels", 15, 35, "Select-A-Size|Ultra Absorbent|Recycled|Double Roll", ", 6 Rolls|, 12 Rolls:1.7",
                 "absorbs spills twice as fast as ordinary towels|is strong enough to scrub without tearing"),
            kind("Trash Bags", 10, 26, "Drawstring|Heavy-Duty|Odor Control|Compostable", ", 13 Gallon, 90 Count|, 30 Gallon, 50 Count:1.1",
                 "has a stretchable drawstring that won't tear|locks in odors for up to 7 days"),
            kind("All-Purpose Cleaner", 5, 15, "Plant-Based|Multi-Surface|Lavender|Disinfecting", "|, 2-Pack:1.8",
                 "cleans counters, glass and stainless steel|leaves no streaks or residue"),
            kind("Disinfecting Wipes", 6, 18, "Lemon|Bleach-Free|Fresh Scent|Hospital-Grade", ", 75 Count|, 3-Pack:2.4",
                 "kills 99.9% of household germs|is safe on most hard surfaces"),
            kind("Microfiber Cleaning Cloths", 10, 24, "Lint-Free|Ultra Soft|All-Purpose|Streak-Free", ", 12-Pack|, 24-Pack:1.7",
                 "traps dust and dirt without chemicals|can be washed and reused hundreds of times"),
        ), "is safe to use around kids and pets|comes in packaging made from recycled plastic", weight=(1.0, 12.0)),
        leaf("Medical Supplies & Equipment", "Carewell|Vitalis|MedAxis", (
            kind("Blood Pressure Monitor", 30, 80, "Upper Arm|Wrist|Bluetooth|Digital", "",
                 "stores the last 120 readings for two users|detects irregular heartbeats"),
            kind("Thermometer", 10, 40, "Digital|Forehead|Ear|Instant-Read", "|, 2-Pack:1.7",
                 "gives accurate readings in under 10 seconds|has a fever alarm and backlit display"),
            kind("Pulse Oximeter", 18, 45, "Fingertip|Portable|Bluetooth|Pediatric", "",
                 "measures blood oxygen and pulse rate in seconds|has a bright OLED display"),
            kind("First Aid Kit", 15, 50, "Compact|Family|Travel|Emergency", ", 160 Pieces|, 300 Pieces:1.5",
                 "includes bandages, gauze, ointments and tools|packs into a water-resistant case"),
            kind("Heating Pad", 20, 50, "Electric|Extra-Large|Moist Heat|Cordless", "",
                 "heats up in 30 seconds with six heat settings|shuts off automatically after two hours"),
            kind("Pill Organizer", 6, 18, "Weekly|Twice-a-Day|Monthly|Travel", "|, 2-Pack:1.7",
                 "has easy-open lids labeled by day|is BPA-free"),
        ), "is FSA and HSA eligible|is trusted by families and caregivers", weight=(0.2, 3.0)),
    )),
    ("Electronics", (
        leaf("Headphones & Speakers", "Sonara|Auralith|Pulse Audio|Beatline", (
            kind("Headphones", 35, 300, "Wireless|Noise Cancelling|Over-Ear|Studio", "| with Microphone:1.05",
                 "blocks background noise with active noise cancellation|has memory foam ear cushions for long listening sessions"),
            kind("Earbuds", 25, 180, "True Wireless|Noise Cancelling|Sport|Open-Ear", "| with Charging Case:1.1",
                 "is sweat and water resistant to IPX5|fits securely with three sizes of ear tips"),
            kind("Gaming Headset", 35, 150, "Wireless|Surround Sound|Lightweight|RGB", "| for PC and PS5| for Xbox",
                 "has a detachable noise-cancelling microphone|delivers 7.1 surround sound"),
            kind("Bluetooth Speaker", 30, 200, "Portable|Waterproof|Rugged|Smart", "|, 2-Pack:1.8",
                 "plays loud, 360-degree sound|floats in water and is rated IP67"),
            kind("Kids Headphones", 15, 35, "Volume-Limiting|Wireless|Foldable", "",
                 "limits volume to a safe 85 dB|folds flat for travel"),
        ), "comes with a 1-year warranty and 24/7 support|is tuned by audio engineers for balanced sound",
            COLOR, (0.2, 2.5)),
        leaf("Computers & Accessories", "Keystone|Clarity Tech|Nexon|Bytewise", (
            kind("Keyboard", 25, 140, "Wireless|Mechanical|Ergonomic|Backlit", "| for Mac|, Full Size",
                 "types quietly with low-profile keys|connects to up to three devices at once"),
            kind("Mouse", 12, 80, "Wireless|Ergonomic|Vertical|Gaming", "| for Mac",
                 "tracks on almost any surface|has a rechargeable battery that lasts up to 70 days", COLOR),
            kind("Laptop Stand", 20, 60, "Adjustable|Aluminum|Foldable|Portable", "",
                 "raises your screen by up to six inches|folds flat to fit in a laptop bag"),
            kind("USB-C Hub", 20, 70, "7-in-1|Multiport|Aluminum|Travel", "",
                 "adds HDMI, USB-A and SD card ports|supports 100W pass-through charging"),
            kind("External SSD", 60, 220, "Portable|Rugged|Ultra-Slim|High-Speed", ", 1TB|, 2TB:1.6|, 500GB:0.7",
                 "transfers data at up to 1,050 MB/s|is drop resistant up to 6 feet"),
            kind("Monitor", 160, 420, "27-Inch 4K|24-Inch Full HD|Curved|Ultrawide", "",
                 "has a thin bezel for multi-monitor setups|reduces eye strain with flicker-free technology"),
            kind("Webcam", 30, 120, "1080p|4K|Wide-Angle|Streaming", "| with Microphone:1.1",
                 "adjusts to low light automatically|clips onto any laptop or monitor"),
            kind("Laptop Backpack", 30, 90, "Anti-Theft|Water-Resistant|Slim|Travel", "| for 15.6 Inch Laptops| for 17 Inch Laptops:1.1",
                 "has a padded laptop compartment|has a USB charging port on the side", COLOR),
        ), "comes with a 2-year warranty|is backed by friendly US-based support", weight=(0.2, 12.0)),
        leaf("Television & Video", "Visionex|Clarity Tech|Nexon", (
            kind("Smart TV", 180, 900, "4K UHD|QLED|HDR|Full HD", ", 43 Inch|, 55 Inch:1.4|, 65 Inch:1.9|, 32 Inch:0.6",
                 "has built-in apps for all the major streaming services|refreshes at 120Hz for smooth motion"),
            kind("Streaming Stick", 25, 60, "4K|HD|Voice-Enabled", "",
                 "streams in 4K HDR with Dolby Vision|supports voice control with the included remote"),
            kind("Projector", 90, 450, "Portable|1080p|Mini|Outdoor", "| with Screen:1.2",
                 "projects a picture up to 200 inches wide|connects over HDMI, USB and Wi-Fi"),
            kind("Soundbar", 70, 300, "Surround Sound|Compact|Dolby Atmos|Wireless", "| with Subwoofer:1.4",
                 "connects easily with HDMI ARC|has a dialogue mode that makes voices clearer"),
            kind("TV Wall Mount", 20, 70, "Full Motion|Tilting|Fixed|Heavy-Duty", "| for 32-70 Inch TVs",
                 "fits screens from 32 to 70 inches|tilts and swivels for the perfect viewing angle"),
            kind("HDMI Cable", 8, 25, "High-Speed|8K|Braided|Ultra", ", 6 ft|, 10 ft:1.2|, 2-Pack:1.7",
                 "supports 4K at 120Hz and 8K at 60Hz|has gold-plated connectors"),
        ), "is backed by a 1-year warranty|is easy to set up in minutes", weight=(0.3, 40.0)),
        leaf("Camera & Photo", "Lensora|Shutterline|Visionex", (
            kind("Action Camera", 60, 300, "Waterproof|4K|Compact|Stabilized", "| with Accessories Kit:1.3",
                 "records stabilized 4K video at 60 frames per second|is waterproof to 33 feet without a housing"),
            kind("Digital Camera", 120, 600, "Compact|Mirrorless|Point-and-Shoot|Vlogging", "| with 18-55mm Lens:1.4",
                 "has a 20-megapixel sensor for crisp photos|shoots 4K video"),
            kind("Camera Tripod", 25, 110, "Lightweight|Aluminum|Travel|Carbon Fiber", ", 60 Inch|, 72 Inch:1.2",
                 "extends from 18 to 67 inches|has a quick-release plate"),
            kind("SD Memory Card", 10, 45, "High-Speed|Extreme|Pro|UHS-I", ", 64GB:0.6|, 128GB|, 256GB:1.6",
                 "writes at up to 90 MB/s for burst shooting|is waterproof, shockproof and X-ray proof"),
            kind("Camera Bag", 25, 80, "Padded|Sling|Waterproof|Roll-Top", "",
                 "has padded, customizable dividers|fits a camera, two lenses and a tablet"),
            kind("Ring Light", 20, 70, "LED|Dimmable|Selfie|Desktop", ", 10 Inch|, 18 Inch:1.6",
                 "has three color modes and ten brightness levels|includes a phone holder and tripod stand"),
        ), "is backed by a 1-year warranty|is a favorite of travel photographers and vloggers", weight=(0.1, 5.0)),
    )),
    ("Cell Phones & Accessories", (
        leaf("Cases & Holsters", "ArmorShell|Casewell|Slimline|Otterly", (
            kind("Phone Case", 8, 35, "Shockproof|Slim|Clear|Rugged|MagSafe-Compatible|Silicone",
                 " for iPhone 14| for iPhone 14 Pro| for iPhone 13:0.9| for Galaxy S23| for Pixel 7",
                 "passes 10-foot military-grade drop tests|has raised edges that protect the screen and camera"),
            kind("Wallet Case", 12, 30, "Leather|Folio|Magnetic|Slim",
                 " for iPhone 14| for iPhone 14 Pro| for iPhone 13:0.9| for Galaxy S23| for Pixel 7",
                 "holds up to three cards and some cash|has a magnetic clasp that stays closed"),
            kind("Belt Clip Holster", 10, 25, "Rugged|Leather|Rotating", " for iPhone 14| for Galaxy S23| for Pixel 7",
                 "rotates 360 degrees on its belt clip|fits phones with a slim case on"),
            kind("Full-Body Case", 12, 30, "Rugged|Heavy-Duty|Clear", " for iPhone 14| for iPhone 14 Pro| for Galaxy S23",
                 "has a built-in screen protector|has a kickstand for hands-free viewing"),
        ), "has a lifetime warranty|is designed for a precise, snug fit", COLOR, (0.1, 0.4)),
        leaf("Chargers & Power Adapters", "Voltwise|ChargeCraft|Powerhaus|Bytewise", (
            kind("USB-C Charger", 12, 40, "20W|65W|Dual-Port|GaN|Fast", "|, 2-Pack:1.7",
                 "charges an iPhone to 50% in about 30 minutes|folds its plug away for travel"),
            kind("Wireless Charger", 15, 45, "Fast|3-in-1|MagSafe-Compatible|Foldable", "| Stand| Pad:0.9",
                 "charges through cases up to 5 mm thick|has a non-slip surface that keeps your phone in place"),
            kind("Power Bank", 20, 70, "Portable|Slim|Fast Charging|Solar", ", 10000mAh|, 20000mAh:1.4|, 26800mAh:1.8",
                 "charges two devices at the same time|has LED indicators that show the remaining power"),
            kind("Car Charger", 10, 28, "Dual-Port|Fast|Metal|Mini", "|, 2-Pack:1.7",
                 "fits flush in your car's socket|charges two phones at full speed"),
            kind("Charging Cable", 7, 20, "Braided|USB-C to USB-C|USB-C to Lightning|Right-Angle", ", 6 ft|, 3 ft:0.8|, 3-Pack:1.8|, 10 ft:1.2",
                 "has a braided nylon jacket tested to 20,000 bends|supports fast charging and data sync"),
            kind("Charging Station", 25, 70, "Multi-Device|Bamboo|3-in-1|Foldable", "",
                 "charges up to six devices at once|keeps cables neat and organized"),
        ), "is compatible with iPhone, Samsung Galaxy and Google Pixel"
           "|has built-in protection against overheating and overcharging", weight=(0.1, 1.0)),
        leaf("Screen Protectors", "ClearGuard|Slimline|ArmorShell", (
            kind("Screen Protector", 6, 20, "Tempered Glass|Privacy|Anti-Glare|Full Coverage|Matte",
                 " for iPhone 14| for iPhone 14 Pro Max:1.1| for Galaxy S23 Ultra:1.1| for Pixel 7 Pro| for iPad 10th Generation:1.4",
                 "has 9H hardness that resists scratches from keys|installs bubble-free with the included alignment frame"),
            kind("Camera Lens Protector", 6, 15, "Tempered Glass|Aluminum Ring|Ultra-Thin",
                 " for iPhone 14 Pro| for iPhone 14| for Galaxy S23 Ultra",
                 "protects the camera lenses without affecting photos|is only 0.25 mm thin"),
            kind("Laptop Privacy Screen", 20, 50, "Magnetic|Anti-Blue Light|Removable",
                 " for 13 Inch MacBook Air| for 14 Inch Laptops| for 15.6 Inch Laptops:1.2",
                 "blocks side views from anyone beside you|filters blue light to reduce eye strain"),
        ), "comes with a cleaning kit and lifetime replacements|is easy to remove without residue", weight=(0.05, 0.3)),
    )),
    ("Grocery & Gourmet Food", (
        leaf("Snacks & Sweets", "Harvest Lane|Crunchwell|Maple Hollow|Sweet Acre", (
            kind("Trail Mix", 6, 18, "Classic|Tropical|Mountain|Sweet and Salty", ", 24 oz|, Pack of 6 Snack Bags:1.1",
                 "mixes roasted nuts, seeds and dried fruit|is a good source of protein and fiber"),
            kind("Protein Bars", 12, 30, "Chocolate Peanut Butter|Cookie Dough|Keto|Gluten-Free", ", 12 Count|, 24 Count:1.8",
                 "has 20 grams of protein per bar|contains only 3 grams of sugar"),
            kind("Kettle Chips", 4, 12, "Sea Salt|Salt and Vinegar|Jalapeño|BBQ", ", 8 oz|, Pack of 6:3",
                 "is cooked in small batches for extra crunch|is cooked in avocado oil"),
            kind("Mixed Nuts", 8, 24, "Deluxe|Unsalted|Honey Roasted|Lightly Salted", ", 16 oz|, 34 oz:1.8",
                 "has more cashews and almonds than peanuts|is roasted fresh in small batches"),
            kind("Chocolate Truffles", 10, 30, "Dark Chocolate|Milk Chocolate|Assorted|Sea Salt Caramel", ", 24 Pieces|, Gift Box of 12:0.7",
                 "melts smoothly on the tongue|is made with sustainably sourced cocoa"),
            kind("Granola Bites", 5, 14, "Oat and Honey|Dark Chocolate|Peanut Butter|Blueberry", ", 10 oz|, Pack of 4:2.6",
                 "is baked with whole grain oats|makes a perfect on-the-go snack"),
        ), "is made with simple, non-GMO ingredients|comes in resealable packaging for lasting freshness", weight=(0.5, 4.0)),
        leaf("Coffee, Tea & Beverages", "Morning Ritual|Kettle & Leaf|Roastwell|Maple Hollow", (
            kind("Whole Bean Coffee", 10, 28, "Medium Roast|Dark Roast|Espresso|Colombian", ", 12 oz|, 2 lb Bag:1.9",
                 "is roasted in small batches for peak freshness|has rich notes of chocolate and toasted almond"),
            kind("Ground Coffee", 9, 24, "Medium Roast|Dark Roast|Decaf|Breakfast Blend", ", 12 oz|, 24 oz:1.7",
                 "is ground for drip coffee makers|has a smooth, low-acid finish"),
            kind("Coffee Pods", 15, 40, "Medium Roast|Dark Roast|Decaf|Hazelnut", ", 72 Count|, 24 Count:0.4",
                 "is compatible with Keurig K-Cup brewers|is made with 100% Arabica coffee"),
            kind("Tea Bags", 5, 16, "Green|Chamomile|English Breakfast|Earl Grey|Peppermint", ", 100 Count|, 20 Count:0.4",
                 "is individually wrapped to lock in aroma|steeps a full-flavored cup in three minutes"),
            kind("Matcha Powder", 15, 35, "Ceremonial Grade|Culinary Grade|Organic", ", 1 oz|, 3.5 oz:1.8",
                 "is stone-ground from shade-grown Japanese tea leaves|whisks smoothly into lattes and smoothies"),
            kind("Sparkling Water", 8, 20, "Lime|Grapefruit|Black Cherry|Unflavored", ", Pack of 12|, Pack of 24:1.8",
                 "contains zero calories and no sweeteners|is lightly carbonated with natural flavors"),
        ), "is certified kosher|is a customer favorite for everyday enjoyment", weight=(0.5, 6.0)),
        leaf("Pantry Staples", "Harvest Lane|Greenfield Naturals|Old Mill|Sweet Acre", (
            kind("Olive Oil", 10, 30, "Extra Virgin|Organic|Cold-Pressed|Mediterranean", ", 16.9 fl oz|, 33.8 fl oz:1.7",
                 "is cold-pressed from a single harvest|has a fruity, peppery finish"),
            kind("Pasta", 3, 10, "Whole Wheat|Organic|Gluten-Free|Bronze-Cut", ", 16 oz|, Pack of 4:3.2",
                 "cooks al dente in under 10 minutes|holds sauce beautifully"),
            kind("Jasmine Rice", 6, 20, "Thai|Organic|Brown|Long Grain", ", 5 lb Bag|, 2 lb Bag:0.5",
                 "cooks up fluffy and fragrant|is grown without synthetic pesticides"),
            kind("Raw Honey", 8, 22, "Organic|Wildflower|Manuka|Unfiltered", ", 16 oz|, 32 oz:1.7",
                 "is made with just one ingredient|is never heated or filtered"),
            kind("Maple Syrup", 10, 28, "Pure|Organic|Grade A Amber|Dark Robust", ", 12 fl oz|, 32 fl oz:2",
                 "is made from 100% pure Vermont maple sap|has no added sugars or corn syrup"),
            kind("Rolled Oats", 5, 14, "Old-Fashioned|Organic|Gluten-Free|Sprouted", ", 42 oz|, Pack of 2:1.8",
                 "cooks in five minutes on the stovetop|is a good source of fiber"),
            kind("Peanut Butter", 4, 12, "Creamy|Crunchy|Natural|Organic", ", 16 oz|, 40 oz:2|, 2-Pack:1.8",
                 "is made from just peanuts and salt|needs no stirring"),
        ), "is packed in a BPA-free container|is certified kosher", weight=(0.5, 6.0)),
    )),
)
# fmt: on

# The last sentence of some product descriptions.
DESCRIPTION_CLOSERS = (
    "Backed by our 30-day satisfaction guarantee.",
    "A thoughtful gift for friends and family.",
    "Ships in frustration-free, recyclable packaging.",
    "Thousands of happy customers rely on it every day.",
    "Quality checked before it ships.",
)

# Review vocabulary by star rating; "{noun}" is the product's noun in lower case, e.g. "frying pan".
# fmt: off
REVIEW_TITLES = {
    5: ("Absolutely love it!", "Best {noun} I've owned", "Five stars", "Exceeded my expectations",
        "Perfect!", "Highly recommend", "Worth every penny", "Could not be happier"),
    4: ("Very good", "Great value for the money", "Solid {noun}", "Does the job well",
        "Happy with it", "Really nice, minor quibbles", "Pretty great"),
    3: ("It's okay", "Decent but not great", "Average {noun}", "Mixed feelings",
        "Good enough for the price", "Fine, nothing special"),
    2: ("Disappointed", "Not worth the money", "Could be better", "Had high hopes", "Cheaply made"),
    1: ("Terrible", "Stopped working after a week", "Do not buy", "Waste of money",
        "Returned it", "Very poor quality"),
}
REVIEW_SENTENCES = {
    5: ("I have used this {noun} every day for a month and it is perfect.",
        "The quality is outstanding for the price.",
        "It arrived quickly and was exactly as described.",
        "I already ordered a second one as a gift.",
        "My whole family loves it.",
        "You can tell it is well made the moment you take it out of the box.",
        "This is the best {noun} I have bought in years.",
        "Setup was easy and it looks great."),
    4: ("Overall a really good {noun} for the money.",
        "It works well, although the instructions could be clearer.",
        "Good quality, but shipping took a few extra days.",
        "I would buy it again.",
        "Does everything I need it to do.",
        "Only wish it came in more colors.",
        "A little smaller than I expected, but still great."),
    3: ("It's fine, but nothing special.",
        "The {noun} does the job, though it feels a bit flimsy.",
        "Some things I like, some I don't.",
        "Decent for the price, but I expected more.",
        "It works, but the finish started to wear after a few weeks.",
        "Not bad, not great."),
    2: ("The {noun} stopped holding up after a couple of weeks.",
        "The quality is not what the pictures suggest.",
        "It feels cheaply made.",
        "I had to contact customer service twice.",
        "Smaller than described and not very sturdy.",
        "I probably will not buy this again."),
    1: ("This {noun} fell apart within the first week.",
        "Completely useless, I returned it the next day.",
        "Nothing like the description.",
        "Save your money and buy something else.",
        "It arrived damaged and the replacement was no better.",
        "Worst purchase I have made online."),
}
# fmt: on

# Admin comments in order histories.
ORDER_COMMENTS = (
    "Customer called to confirm the delivery address.",
    "Customer asked for gift wrapping; added a gift note.",
    "Payment received by check; deposited.",
    "Customer requested delivery after 5 PM.",
    "Address verified with the customer by email.",
    "Customer asked whether the items can ship together.",
    "Customer asked to leave the package at the front desk.",
)
HOLD_REASONS = (
    "On hold: awaiting payment verification.",
    "On hold: the shipping address could not be verified.",
    "On hold at the customer's request.",
)
CANCEL_REASONS = (
    "Canceled at the customer's request.",
    "Canceled: payment was not received within 14 days.",
    "Canceled: an item went out of stock.",
    "Order canceled.",
)
REFUND_REASONS = (
    "Refunded: the customer returned the items.",
    "Refunded: the package was lost in transit.",
    "Credit memo issued; the items arrived damaged.",
)

# Storefront queries besides catalog nouns and brands (a few match nothing, as real searches do).
EXTRA_SEARCH_QUERIES = (
    "gift for mom", "wireless", "organic", "stainless steel", "waterproof", "usb-c",
    "iphone 14", "galaxy s23", "queen", "king size", "gluten-free", "for men", "for women",
    "rechargeable", "led", "set of 4", "cordless", "black friday deals", "nintendo switch",
    "air fryer", "standing desk", "noise cancelling", "memory foam", "coffee", "vitamin c",
)  # fmt: skip
