//! Word lists for the entity extractor, written from general knowledge.
//! Matching is case-insensitive; `extract.rs` decides which entries also
//! need a capital letter (see [`CAP_ONLY`]).
//!
//! Typing follows the labelling guide: vendors and platforms are
//! organizations, software people run or use is a tool, managed cloud
//! offerings are services, devices and products are "other".

/// Companies, vendors, platforms, banks, airlines, retailers.
#[rustfmt::skip]
pub const ORGANIZATIONS: &[&str] = &[
    "AWS", "Amazon", "Amazon Web Services", "GCP", "Google Cloud", "Google", "Azure", "Microsoft",
    "GitHub", "GitLab", "Bitbucket", "Atlassian", "Heroku", "Vercel", "Netlify", "Stripe", "Twilio",
    "Datadog", "PagerDuty", "Opsgenie", "Figma", "Salesforce", "Snowflake", "Databricks",
    "Cloudflare", "Fastly", "Akamai", "DigitalOcean", "Linode", "Hetzner", "OVH", "OVHcloud",
    "Scaleway", "Oracle", "IBM", "Red Hat", "SAP", "Apple", "Meta", "Facebook", "Instagram",
    "Twitter", "LinkedIn", "OpenAI", "Anthropic", "Mistral", "Cohere", "Hugging Face",
    "HuggingFace", "Nvidia", "NVIDIA", "Intel", "AMD", "Arm", "Qualcomm", "Samsung", "Sony",
    "Huawei", "Xiaomi", "Tesla", "Netflix", "Spotify", "Uber", "Lyft", "Airbnb", "Booking.com",
    "Expedia", "Shopify", "Zendesk", "Freshdesk", "HubSpot", "Mailchimp", "SendGrid", "Mailgun",
    "Postmark", "Okta", "Auth0", "Plaid", "Adyen", "PayPal", "Braintree", "Paystack", "Flutterwave",
    "Klarna", "Square", "Revolut", "Monzo", "Starling", "N26", "ING", "Chase", "JPMorgan",
    "Goldman Sachs", "Morgan Stanley", "Barclays", "HSBC", "Lloyds", "NatWest", "Santander", "BBVA",
    "CaixaBank", "Sabadell", "Deutsche Bank", "Commerzbank", "Sparkasse", "UBS", "Credit Suisse",
    "BNP Paribas", "Société Générale", "Crédit Agricole", "Nubank", "Itaú", "Bradesco", "Citi",
    "Citibank", "Wells Fargo", "Bank of America", "American Express", "Amex", "Visa", "Mastercard",
    "Emirates", "Lufthansa", "Iberia", "Ryanair", "easyJet", "KLM", "Air France", "British Airways",
    "Delta", "United Airlines", "American Airlines", "Qatar Airways", "Turkish Airlines", "TAP",
    "LATAM", "Vueling", "Eurowings", "Swiss", "Eurostar", "SNCF", "Deutsche Bahn", "Renfe",
    "Amtrak", "Siemens", "Bosch", "Allianz", "BMW", "Volkswagen", "Daimler", "Mercedes", "Porsche",
    "Audi", "Zalando", "Delivery Hero", "SoundCloud", "Mitsubishi", "Toyota", "Honda", "Nissan",
    "Embraer", "Petrobras", "Mercado Libre", "MercadoLibre", "Globant", "Rappi", "Cabify", "Glovo",
    "Telefónica", "Movistar", "Vodafone", "Orange", "Deutsche Telekom", "T-Mobile", "Verizon",
    "AT&T", "Comcast", "Decathlon", "Carrefour", "Leroy Merlin", "Inditex", "Zara", "IKEA", "Lidl",
    "Aldi", "Tesco", "Sainsbury's", "Ocado", "Walmart", "Costco", "Whole Foods", "Trader Joe's",
    "Starbucks", "McDonald's", "Oatly", "Nestlé", "Unilever", "Peloton", "Nike", "Adidas",
    "Patagonia", "Deliveroo", "DoorDash", "Instacart", "Just Eat", "Careem", "Gojek", "Didi",
    "Bolt", "Marriott", "Hilton", "Hyatt", "Accor", "Ibis", "Four Seasons", "Ritz-Carlton",
    "Atlassian", "Zoho", "Monday.com", "Asana", "Canva", "Miro", "Dropbox", "DocuSign", "Workday",
    "ServiceNow", "Intercom", "Segment", "Mixpanel", "Amplitude", "LaunchDarkly", "Fivetran",
    "dbt Labs", "Confluent", "Elastic", "MongoDB Inc", "Redis Labs", "HashiCorp", "Docker Inc",
    "JetBrains", "Mozilla", "Canonical", "SUSE", "Vmware", "VMware", "Broadcom", "Cisco", "Juniper",
    "Palantir", "Coinbase", "Binance", "Kraken", "Supabase", "PlanetScale", "Neon", "Render",
    "Fly.io", "Railway", "Backblaze", "Wasabi", "Sentry.io", "New Relic", "Splunk", "Sumo Logic",
    "Honeycomb", "Lightstep", "Grafana Labs", "Snyk", "Sonatype", "CircleCI", "Travis CI",
    "Cloudinary", "Algolia", "Contentful", "Sanity", "Webflow", "Wix", "Squarespace",
    "WordPress.com", "Automattic", "Bitrise", "Expo", "Mapbox", "TomTom", "Twitch", "YouTube",
    "TikTok", "Snapchat", "Pinterest", "Reddit", "Discord Inc", "Slack Technologies", "Yahoo",
    "Baidu", "Alibaba", "Alibaba Cloud", "Tencent", "ByteDance", "Rakuten", "Kakao", "Naver",
    "Accenture", "Deloitte", "PwC", "KPMG", "EY", "McKinsey", "BCG", "Capgemini", "Infosys", "TCS",
    "Wipro", "Thoughtworks", "EPAM", "NASA", "ESA", "CERN", "UN", "EU", "NHS", "BBC", "CNN",
    "Reuters", "Bloomberg", "Airbus", "Boeing", "Ericsson", "Nokia", "Spotify AB", "Philips",
    "Heineken", "Shell", "BP", "TotalEnergies", "Repsol", "Iberdrola", "Enel", "EDP", "Galp",
    "Nestle", "Roche", "Novartis", "Pfizer", "Bayer", "BASF", "Merck", "AstraZeneca", "GSK",
    "Sanofi", "L'Oréal", "LVMH", "Hermès", "Michelin", "Renault", "Peugeot", "Stellantis", "Airbus",
    "Thales", "Dassault", "Orange", "Bouygues", "Doctolib", "BlaBlaCar", "Qonto", "Swile",
    "Back Market",
];

/// Software people run or use: languages, frameworks, databases, dev and ops
/// tools, operating systems, apps.
#[rustfmt::skip]
pub const TOOLS: &[&str] = &[
    "Python", "Rust", "Go", "Golang", "Swift", "Java", "Kotlin", "Scala", "Ruby", "PHP", "Perl",
    "Lua", "Elixir", "Erlang", "Haskell", "OCaml", "Clojure", "F#", "C#", "C++", "C", "Objective-C",
    "TypeScript", "JavaScript", "Dart", "Zig", "Nim", "Julia", "R", "MATLAB", "Fortran", "COBOL",
    "Bash", "zsh", "PowerShell", "WebAssembly", "Wasm", "Solidity", "Node", "Node.js", "Deno",
    "Bun", "npm", "pnpm", "yarn", "pip", "pipx", "poetry", "uv", "conda", "cargo", "rustup",
    "clippy", "rustfmt", "gradle", "Maven", "sbt", "Bazel", "Buck", "CMake", "make", "ninja", "nvm",
    "pyenv", "rbenv", "asdf", "Homebrew", "brew", "apt", "React", "React Native", "Next.js", "Nuxt",
    "Vue", "Vue.js", "Angular", "AngularJS", "Svelte", "SvelteKit", "Solid", "Ember", "Astro",
    "Remix", "Gatsby", "Vite", "Webpack", "Rollup", "esbuild", "Parcel", "Babel", "Turbopack",
    "Tailwind", "Tailwind CSS", "Bootstrap", "jQuery", "Redux", "MobX", "Storybook", "ESLint",
    "Prettier", "Biome", "Jest", "Vitest", "Mocha", "Cypress", "Playwright", "Selenium",
    "Puppeteer", "jsdom", "pytest", "unittest", "tox", "nox", "MyPy", "mypy", "Pyright", "Ruff",
    "Black", "flake8", "pylint", "isort", "Django", "Flask", "FastAPI", "Pydantic", "SQLAlchemy",
    "Alembic", "Celery", "pandas", "NumPy", "SciPy", "Polars", "PyTorch", "TensorFlow", "Keras",
    "JAX", "scikit-learn", "sklearn", "XGBoost", "LightGBM", "Hugging Face Transformers", "spaCy",
    "NLTK", "LangChain", "LlamaIndex", "Jupyter", "JupyterLab", "Streamlit", "Gradio", "Airflow",
    "Dagster", "Prefect", "dbt", "Spark", "Apache Spark", "PySpark", "Flink", "Beam", "Hadoop",
    "Hive", "Presto", "Trino", "Kafka", "Apache Kafka", "Redpanda", "RabbitMQ", "ActiveMQ", "NATS",
    "ZeroMQ", "Pulsar", "Avro", "Protobuf", "gRPC", "GraphQL", "Apollo", "Rails", "Ruby on Rails",
    "Sinatra", "Laravel", "Symfony", "Spring", "Spring Boot", "Hibernate", "Quarkus", "Micronaut",
    "Express", "Express.js", "NestJS", "Koa", "Fastify", "Hono", "Phoenix", "Actix", "Axum",
    "Tokio", "Rocket", "Serde", "Diesel", "SQLx", "Gin", "Echo", "Fiber", "ASP.NET", ".NET",
    "dotnet", "Blazor", "Xamarin", "Flutter", "SwiftUI", "UIKit", "Jetpack Compose", "Ionic",
    "Capacitor", "Electron", "Tauri", "Qt", "GTK", "Unity", "Unreal", "Unreal Engine", "Godot",
    "PostgreSQL", "Postgres", "MySQL", "MariaDB", "SQLite", "Oracle Database", "SQL Server",
    "MongoDB", "Mongo", "Redis", "Valkey", "Memcached", "Cassandra", "ScyllaDB", "CockroachDB",
    "DuckDB", "ClickHouse", "Elasticsearch", "OpenSearch", "Solr", "Meilisearch", "Typesense",
    "Neo4j", "InfluxDB", "TimescaleDB", "etcd", "ZooKeeper", "Consul", "Vault", "Nomad",
    "Terraform", "OpenTofu", "Pulumi", "Ansible", "Puppet", "Chef", "SaltStack", "Packer",
    "Vagrant", "Docker", "Docker Compose", "Docker Desktop", "Podman", "OrbStack", "containerd",
    "Kubernetes", "k8s", "kubectl", "Helm", "Kustomize", "minikube", "kind", "k3s", "OpenShift",
    "Rancher", "Argo CD", "ArgoCD", "Argo", "Argo Workflows", "Flux", "Spinnaker", "Tekton",
    "Jenkins", "Travis", "Buildkite", "Drone", "TeamCity", "Bamboo", "GitHub Actions", "GitLab CI",
    "Fastlane", "TestFlight", "Gradle", "Xcode", "Android Studio", "Dependabot", "Renovate",
    "SonarQube", "Istio", "Linkerd", "Envoy", "NGINX", "nginx", "Apache", "Apache HTTP Server",
    "HAProxy", "Traefik", "Caddy", "Varnish", "Prometheus", "Grafana", "Loki", "Tempo", "Thanos",
    "Cortex", "Mimir", "Jaeger", "Zipkin", "OpenTelemetry", "Kibana", "Logstash", "Fluentd",
    "Fluent Bit", "Vector", "Sentry", "Statuspage", "Nagios", "Zabbix", "Graylog", "Kiali",
    "restic", "rsync", "logrotate", "cron", "systemd", "tmux", "Vim", "Neovim", "Emacs", "VS Code",
    "Visual Studio Code", "Visual Studio", "IntelliJ", "IntelliJ IDEA", "PyCharm", "WebStorm",
    "GoLand", "RubyMine", "CLion", "Rider", "Cursor", "Zed", "Sublime Text", "Atom", "git", "Git",
    "GitHub Desktop", "Mercurial", "Subversion", "SVN", "Gerrit", "Copilot", "GitHub Copilot",
    "ChatGPT", "Claude", "GPT-4", "GPT-4o", "GPT-3.5", "GPT-5", "Gemini", "Llama", "Haiku",
    "Sonnet", "Opus", "Whisper", "JVM", "JDK", "GraalVM", "CLR", "DALL-E", "Midjourney",
    "Stable Diffusion", "Ollama", "vLLM", "Linux", "Ubuntu", "Debian", "Fedora", "CentOS", "RHEL",
    "Alpine", "Arch Linux", "NixOS", "Nix", "FreeBSD", "Windows", "macOS", "Mac OS", "OS X", "iOS",
    "iPadOS", "watchOS", "Android", "ChromeOS", "WSL", "Proxmox", "TrueNAS", "Unraid", "ESXi",
    "Tailscale", "WireGuard", "OpenVPN", "ZeroTier", "Rosetta", "Homebrew", "OpenSSL", "OpenSSH",
    "LibreSSL", "curl", "wget", "jq", "ripgrep", "fzf", "bash", "Bash", "Slack", "Jira",
    "Confluence", "Notion", "Obsidian", "Evernote", "Trello", "Linear", "Basecamp", "ClickUp",
    "Airtable", "Coda", "Microsoft Teams", "Teams", "Zoom", "Google Meet", "Webex", "Skype",
    "Discord", "Telegram", "Signal", "WhatsApp", "Messenger", "iMessage", "FaceTime", "Outlook",
    "Gmail", "Google Calendar", "Google Docs", "Google Sheets", "Google Drive", "Google Maps",
    "Apple Maps", "Apple Reminders", "Apple Notes", "Reminders", "Excel", "Word", "PowerPoint",
    "OneNote", "OneDrive", "SharePoint", "Keynote", "Numbers", "Pages", "Todoist", "Things",
    "1Password", "LastPass", "Bitwarden", "KeePass", "Dashlane", "Chrome", "Google Chrome",
    "Firefox", "Safari", "Edge", "Brave", "Arc", "Opera", "Photoshop", "Lightroom", "Illustrator",
    "InDesign", "Premiere", "After Effects", "Final Cut Pro", "Sketch", "Framer", "Loom",
    "Calendly", "Strava", "Duolingo", "Headspace", "Metabase", "Looker", "Tableau", "Power BI",
    "Superset", "Redash", "Grafana Cloud", "Postman", "Insomnia", "Bruno", "Swagger", "OpenAPI",
    "Terraform Cloud", "Airbyte", "Zapier", "Make.com", "n8n", "IFTTT", "Hugo", "Jekyll",
    "Docusaurus", "MkDocs", "Sphinx", "Pandoc", "LaTeX", "Markdown", "markdown", "Mermaid",
    "PlantUML", "Excalidraw", "draw.io", "Lucidchart", "Keycloak", "Traefik", "Celery Beat",
    "Sidekiq", "Resque", "BullMQ", "Temporal", "Feast", "MLflow", "Weights & Biases", "Kubeflow",
    "Ray", "Dask", "Polars", "Magento", "WooCommerce", "WordPress", "Drupal", "Joomla", "Ghost",
    "Strapi", "Sanity Studio", "Tomcat", "Jetty", "WildFly", "JBoss", "Gunicorn", "uWSGI",
    "Uvicorn", "Puma", "Passenger", "PM2", "Nodemon", "Lerna", "Nx", "Turborepo", "Yarn", "Bundler",
    "RubyGems", "Composer", "NuGet", "CocoaPods", "Carthage", "Homebrew Cask", "Metabase", "Salt",
    "Vagrant", "Wireshark", "tcpdump", "Nmap", "Burp Suite", "Trivy", "Grype", "Falco", "Cilium",
    "Calico", "Flannel", "CoreDNS", "Knative", "Crossplane", "Backstage", "Harbor", "Nexus",
    "Artifactory", "Chocolatey", "Scoop", "winget", "Blender", "GIMP", "Inkscape", "Audacity",
    "OBS", "VLC", "Excel Online", "LibreOffice", "OpenOffice", "Thunderbird", "Mutt", "Alacritty",
    "iTerm", "iTerm2", "Warp", "Kitty", "WezTerm", "Hyper", "Terminal", "PuTTY",
];

/// Managed cloud services and hosted systems.
#[rustfmt::skip]
pub const SERVICES: &[&str] = &[
    "S3", "EC2", "ECS", "EKS", "ECR", "Fargate", "Lambda", "AWS Lambda", "DynamoDB", "RDS",
    "Aurora", "Aurora PostgreSQL", "Redshift", "Athena", "Glue", "Kinesis", "SQS", "SNS", "SES",
    "EventBridge", "Step Functions", "CloudFront", "CloudWatch", "CloudTrail", "CloudFormation",
    "Route 53", "Route53", "IAM", "Cognito", "Amplify", "Bedrock", "SageMaker", "API Gateway",
    "Elastic Beanstalk", "ElastiCache", "Lightsail", "AWS Batch", "Secrets Manager",
    "Parameter Store", "KMS", "GuardDuty", "Amazon S3", "Amazon RDS", "BigQuery", "Cloud Run",
    "Cloud Functions", "Cloud SQL", "Cloud Storage", "GCS", "GKE", "Pub/Sub", "Firestore",
    "Firebase", "Spanner", "Bigtable", "Dataflow", "Dataproc", "Vertex AI", "App Engine",
    "Compute Engine", "Cloud Build", "Looker Studio", "Azure AD", "Entra ID", "Azure DevOps",
    "Azure Functions", "Azure OpenAI", "Cosmos DB", "CosmosDB", "AKS", "Azure Blob Storage",
    "Blob Storage", "Azure SQL", "App Service", "Heroku Postgres", "Atlas", "MongoDB Atlas", "B2",
    "Cloudflare Workers", "Workers", "Cloudflare R2", "R2", "Cloudflare Pages", "Vercel Edge",
    "Supabase Auth", "Neon Postgres", "Upstash", "Fly Postgres", "iCloud", "iCloud Drive",
    "App Store", "Google Play", "Play Store", "Google Play Store", "Mac App Store",
    "Google Workspace", "Microsoft 365", "Office 365", "G Suite", "Gmail API", "Maps API",
    "PagerDuty Events", "Elastic Cloud", "Confluent Cloud", "Snowpipe", "Unity Catalog",
    "Azure Monitor", "Application Insights", "Stackdriver", "Cloud Logging", "Cloud Monitoring",
];

/// Devices, products, events and other named things.
#[rustfmt::skip]
pub const PRODUCTS: &[&str] = &[
    "iPhone", "iPad", "MacBook", "MacBook Pro", "MacBook Air", "iMac", "Mac mini", "Mac Studio",
    "Apple Watch", "AirPods", "AirTag", "Apple TV", "Vision Pro", "Pixel", "Galaxy", "Kindle",
    "Echo", "Alexa", "Siri", "Google Home", "Nest", "Chromecast", "Fire TV", "Raspberry Pi",
    "Arduino", "ESP32", "STM32", "Jetson", "NUC", "ThinkPad", "Surface", "Steam Deck",
    "PlayStation", "PS5", "Xbox", "Nintendo Switch", "Oculus", "Quest", "GoPro", "Fitbit", "Garmin",
    "Oura", "Kobo", "Remarkable", "reMarkable", "YubiKey", "Ledger", "Trezor", "Sonos", "Roomba",
    "Tesla Model 3", "Model 3", "Model Y", "re:Invent", "WWDC", "Google I/O", "KubeCon",
    "Web Summit", "CES", "MWC", "FOSDEM", "PyCon", "RustConf", "JSConf", "DEF CON", "Black Hat",
    "Dreamforce", "SXSW", "Prime", "Amazon Prime", "Prime Video", "Netflix Premium",
    "Spotify Premium", "YouTube Premium", "ChatGPT Plus", "Claude Pro", "Copilot Pro",
    "Miles & More", "Avios", "Flying Blue", "Oyster", "Navigo", "BahnCard", "Interrail", "Eurail",
    "GDPR", "HIPAA", "SOC 2", "SOC2", "PCI DSS", "ISO 27001",
];

/// Countries, regions, cities, neighbourhoods and airports, in the five
/// languages where the spelling differs.
#[rustfmt::skip]
pub const PLACES: &[&str] = &[
    "US", "USA", "United States", "UK", "United Kingdom", "Britain", "England", "Scotland", "Wales",
    "Ireland", "Northern Ireland", "Canada", "Mexico", "México", "Brazil", "Brasil", "Argentina",
    "Chile", "Colombia", "Peru", "Perú", "Uruguay", "Paraguay", "Bolivia", "Ecuador", "Venezuela",
    "Cuba", "Costa Rica", "Panama", "Panamá", "Guatemala", "Spain", "España", "Portugal", "France",
    "Germany", "Deutschland", "Alemania", "Allemagne", "Alemanha", "Italy", "Italia", "Italie",
    "Itália", "Netherlands", "Holland", "Niederlande", "Países Bajos", "Pays-Bas", "Belgium",
    "Belgique", "Belgien", "Bélgica", "Switzerland", "Schweiz", "Suisse", "Suiza", "Suíça",
    "Austria", "Österreich", "Autriche", "Poland", "Polen", "Polska", "Pologne", "Czechia",
    "Czech Republic", "Tschechien", "Hungary", "Ungarn", "Romania", "Bulgaria", "Greece",
    "Griechenland", "Grèce", "Grecia", "Turkey", "Türkiye", "Türkei", "Sweden", "Schweden", "Suède",
    "Suecia", "Norway", "Norwegen", "Denmark", "Dänemark", "Finland", "Finnland", "Iceland",
    "Estonia", "Latvia", "Lithuania", "Ukraine", "Russia", "Russland", "Serbia", "Croatia",
    "Slovenia", "Slovakia", "Luxembourg", "Luxemburg", "Monaco", "Malta", "Cyprus", "Angleterre",
    "Inglaterra", "Royaume-Uni", "Reino Unido", "Estados Unidos", "États-Unis", "Francia", "França",
    "Frankreich", "Espagne", "Espanha", "Spanien", "Japan", "Japón", "Japon", "Japão", "China",
    "Chine", "India", "Inde", "Índia", "Indien", "Pakistan", "Bangladesh", "Sri Lanka", "Nepal",
    "Singapore", "Singapur", "Malaysia", "Indonesia", "Thailand", "Vietnam", "Philippines",
    "South Korea", "Korea", "Taiwan", "Hong Kong", "Australia", "Australien", "New Zealand",
    "Israel", "Egypt", "Ägypten", "Morocco", "Marokko", "Maroc", "Marruecos", "Tunisia", "Algeria",
    "Nigeria", "Ghana", "Kenya", "Ethiopia", "South Africa", "Südafrika", "Senegal", "Rwanda",
    "Tanzania", "Uganda", "Angola", "Mozambique", "Moçambique", "Cabo Verde", "UAE", "Saudi Arabia",
    "Qatar", "Jordan", "Lebanon", "Iran", "Iraq", "Europe", "Europa", "Asia", "Africa", "Afrika",
    "Latin America", "LATAM", "EMEA", "APAC", "Scandinavia", "Silicon Valley", "Bay Area",
    "Catalonia", "Cataluña", "Catalunya", "Andalusia", "Andalucía", "Galicia", "Basque Country",
    "Bavaria", "Bayern", "Brittany", "Bretagne", "Provence", "Normandy", "Normandie", "Tuscany",
    "Toscana", "Algarve", "Alentejo", "Madeira", "Azores", "Açores", "Canary Islands", "Canarias",
    "Mallorca", "Ibiza", "Tenerife", "Sicily", "Sardinia", "Corsica", "Corse", "Rioja", "La Rioja",
    "Douro", "Bordeaux", "Burgundy", "Bourgogne", "Champagne", "Alsace", "California", "Texas",
    "New York", "NYC", "Florida", "Washington", "Oregon", "Colorado", "Massachusetts", "Illinois",
    "Georgia", "Virginia", "Ohio", "Michigan", "Arizona", "Nevada", "Utah", "Hawaii", "Alaska",
    "Ontario", "Quebec", "Québec", "British Columbia", "Alberta", "London", "Manchester",
    "Birmingham", "Liverpool", "Leeds", "Bristol", "Edinburgh", "Glasgow", "Cardiff", "Belfast",
    "Oxford", "Cambridge", "Brighton", "Dublin", "Cork", "Galway", "Paris", "Lyon", "Marseille",
    "Toulouse", "Nice", "Nantes", "Lille", "Strasbourg", "Montpellier", "Rennes", "Grenoble",
    "Versailles", "Bruxelles", "Brussels", "Brüssel", "Antwerp", "Anvers", "Ghent", "Gand", "Liège",
    "Genève", "Geneva", "Genf", "Lausanne", "Zurich", "Zürich", "Basel", "Bâle", "Bern", "Berne",
    "Lugano", "Berlin", "Munich", "München", "Hamburg", "Hambourg", "Frankfurt", "Francfort",
    "Cologne", "Köln", "Düsseldorf", "Stuttgart", "Leipzig", "Dresden", "Hannover", "Hanover",
    "Nuremberg", "Nürnberg", "Bremen", "Dortmund", "Bonn", "Mannheim", "Karlsruhe", "Heidelberg",
    "Freiburg", "Augsburg", "Potsdam", "Kreuzberg", "Wien", "Vienna", "Vienne", "Viena", "Graz",
    "Salzburg", "Innsbruck", "Amsterdam", "Rotterdam", "Utrecht", "The Hague", "Den Haag",
    "Eindhoven", "Copenhagen", "København", "Kopenhagen", "Stockholm", "Gothenburg", "Oslo",
    "Helsinki", "Reykjavik", "Tallinn", "Riga", "Vilnius", "Warsaw", "Warschau", "Varsovie",
    "Varsovia", "Krakow", "Kraków", "Wroclaw", "Wrocław", "Gdansk", "Prague", "Prag", "Praga",
    "Budapest", "Bucharest", "Sofia", "Belgrade", "Zagreb", "Ljubljana", "Bratislava", "Athens",
    "Athen", "Atenas", "Istanbul", "Ankara", "Kyiv", "Kiev", "Moscow", "Rome", "Roma", "Rom",
    "Milan", "Milano", "Mailand", "Turin", "Torino", "Naples", "Napoli", "Florence", "Firenze",
    "Venice", "Venezia", "Bologna", "Madrid", "Barcelona", "Barcelone", "Valencia", "Valence",
    "Sevilla", "Seville", "Séville", "Málaga", "Malaga", "Bilbao", "Zaragoza", "Granada",
    "Alicante", "Palma", "Salamanca", "San Sebastián", "Donostia", "Lisbon", "Lisboa", "Lisbonne",
    "Lissabon", "Porto", "Oporto", "Coimbra", "Braga", "Faro", "Sintra", "Cascais", "Aveiro",
    "Funchal", "New York City", "Brooklyn", "Manhattan", "Queens", "Boston", "Chicago",
    "San Francisco", "SF", "Los Angeles", "LA", "San Diego", "San Jose", "Oakland", "Palo Alto",
    "Mountain View", "Menlo Park", "Cupertino", "Sunnyvale", "Seattle", "Portland", "Denver",
    "Austin", "Dallas", "Houston", "Miami", "Atlanta", "Philadelphia", "Pittsburgh", "Detroit",
    "Minneapolis", "Nashville", "Phoenix", "Las Vegas", "Salt Lake City", "Washington DC",
    "Baltimore", "Toronto", "Montreal", "Montréal", "Vancouver", "Ottawa", "Calgary", "Mexico City",
    "Ciudad de México", "CDMX", "Guadalajara", "Monterrey", "Cancún", "Cancun", "Bogotá", "Bogota",
    "Medellín", "Medellin", "Cali", "Lima", "Quito", "Santiago", "Buenos Aires", "Córdoba",
    "Rosario", "Mendoza", "Montevideo", "Asunción", "La Paz", "Caracas", "São Paulo", "Sao Paulo",
    "Rio de Janeiro", "Rio", "Belo Horizonte", "Brasília", "Brasilia", "Curitiba", "Porto Alegre",
    "Recife", "Salvador", "Fortaleza", "Florianópolis", "Campinas", "Manaus", "Belém", "Copacabana",
    "Ipanema", "Tokyo", "Tokio", "Osaka", "Kyoto", "Yokohama", "Sapporo", "Fukuoka", "Nagoya",
    "Seoul", "Busan", "Beijing", "Peking", "Shanghai", "Shenzhen", "Guangzhou", "Hangzhou",
    "Taipei", "Bangkok", "Hanoi", "Ho Chi Minh City", "Jakarta", "Bali", "Manila", "Kuala Lumpur",
    "Mumbai", "Bombay", "Delhi", "New Delhi", "Bangalore", "Bengaluru", "Hyderabad", "Chennai",
    "Pune", "Kolkata", "Karachi", "Lahore", "Dhaka", "Dubai", "Abu Dhabi", "Doha", "Riyadh",
    "Tel Aviv", "Jerusalem", "Beirut", "Amman", "Cairo", "Le Caire", "Casablanca", "Marrakech",
    "Tunis", "Algiers", "Lagos", "Abuja", "Accra", "Nairobi", "Addis Ababa", "Kigali", "Dakar",
    "Johannesburg", "Cape Town", "Durban", "Luanda", "Maputo", "Sydney", "Melbourne", "Brisbane",
    "Perth", "Adelaide", "Canberra", "Auckland", "Wellington", "Soho", "Shoreditch", "Camden",
    "Hackney", "Brixton", "Notting Hill", "Mitte", "Prenzlauer Berg", "Neukölln", "Friedrichshain",
    "Schwabing", "Montmartre", "Le Marais", "Marais", "Malasaña", "Gràcia", "Eixample", "Chiado",
    "Alfama", "Baixa", "Bairro Alto", "Belém", "Palermo", "Recoleta", "Vila Madalena", "Pinheiros",
    "Leblon", "Shibuya", "Shinjuku", "Harajuku", "Heathrow", "Gatwick", "Stansted", "JFK",
    "LaGuardia", "Newark", "SFO", "LAX", "O'Hare", "Schiphol", "El Prat", "Charles de Gaulle",
    "CDG", "Orly", "Fiumicino", "Changi", "Narita", "Haneda", "West Europe", "North Europe",
];

/// Common given names across the languages the memories are written in.
#[rustfmt::skip]
pub const GIVEN_NAMES: &[&str] = &[
    "Aaron", "Abby", "Abdul", "Abigail", "Adam", "Adrian", "Adriana", "Agnes", "Ahmed", "Aiko",
    "Aisha", "Alan", "Albert", "Alberto", "Alejandro", "Alejandra", "Aleksandr", "Alessandro",
    "Alex", "Alexa", "Alexander", "Alexandra", "Alexandre", "Alexis", "Alfie", "Alfonso", "Alfredo",
    "Ali", "Alice", "Alicia", "Alina", "Alison", "Amanda", "Amara", "Amelia", "Amelie", "Amir",
    "Amit", "Amy", "Ana", "Anders", "Andrea", "Andreas", "Andrei", "Andrés", "Andrew", "Andy",
    "Angela", "Angelo", "Anika", "Anita", "Anja", "Ann", "Anna", "Anne", "Annika", "Anthony",
    "Antoine", "Anton", "Antonia", "Antonio", "António", "Anya", "Arjun", "Armando", "Arnaud",
    "Arthur", "Arturo", "Asha", "Ashley", "Astrid", "Aurélie", "Ava", "Axel", "Ayesha", "Aylin",
    "Barbara", "Bastian", "Beatriz", "Beatrice", "Ben", "Benedikt", "Benjamin", "Benoît", "Bernard",
    "Bernardo", "Bertrand", "Beth", "Bianca", "Bilal", "Björn", "Blanca", "Bob", "Boris", "Brandon",
    "Brian", "Bruna", "Bruno", "Bryan", "Caio", "Caleb", "Camila", "Camille", "Carla", "Carlos",
    "Carlota", "Carmen", "Carol", "Caroline", "Carolina", "Catarina", "Catherine", "Cecilia",
    "Cédric", "Celia", "César", "Chantal", "Charles", "Charlie", "Charlotte", "Chen", "Chiara",
    "Chloe", "Chloé", "Chris", "Christian", "Christina", "Christine", "Christoph", "Christopher",
    "Claire", "Clara", "Claudia", "Claudio", "Clément", "Colin", "Connor", "Constanza", "Cristina",
    "Cristiano", "Dan", "Dana", "Daniel", "Daniela", "Daniele", "Danielle", "Dario", "David",
    "Davide", "Debora", "Deborah", "Deepak", "Denis", "Dennis", "Diana", "Diego", "Dimitri",
    "Dmitri", "Dmitry", "Dominik", "Dominique", "Donna", "Dorothy", "Duarte", "Dylan", "Ed",
    "Eduardo", "Edward", "Eleanor", "Elena", "Eli", "Elias", "Elisa", "Elisabeth", "Elise", "Eliza",
    "Elizabeth", "Ella", "Ellen", "Eloise", "Elsa", "Emil", "Emily", "Emilia", "Emilio", "Emma",
    "Emmanuel", "Enrique", "Eric", "Erik", "Erika", "Ethan", "Eva", "Evan", "Eve", "Ezra", "Fabian",
    "Fabio", "Fábio", "Fatima", "Fatma", "Felipe", "Felix", "Félix", "Fernanda", "Fernando",
    "Filipa", "Filipe", "Finn", "Florian", "Francesca", "Francesco", "Francisco", "François",
    "Françoise", "Frank", "Franziska", "Freddie", "Frederik", "Frida", "Gabriel", "Gabriela",
    "Gabriele", "Gabrielle", "Gaël", "Gary", "George", "Georg", "Gerard", "Gerardo", "Gianluca",
    "Gilles", "Giorgio", "Giovanni", "Gisela", "Giulia", "Giuseppe", "Gonzalo", "Grace", "Greg",
    "Gregor", "Gregory", "Greta", "Guilherme", "Guillaume", "Gustavo", "Hamid", "Hana", "Hannah",
    "Hans", "Hassan", "Heidi", "Helen", "Helena", "Hélène", "Henrik", "Henrique", "Henry",
    "Hiroshi", "Hugo", "Ian", "Ignacio", "Igor", "Ilya", "Imran", "Inês", "Ines", "Ingrid", "Irene",
    "Isaac", "Isabel", "Isabela", "Isabella", "Isabelle", "Ivan", "Iván", "Jack", "Jacob",
    "Jacques", "Jake", "James", "Jamie", "Jan", "Jana", "Jane", "Janet", "Janine", "Jasmine",
    "Jason", "Javier", "Jean", "Jeff", "Jennifer", "Jens", "Jeremy", "Jessica", "Jiho", "Jin",
    "Joana", "Joanna", "João", "Joaquín", "Joe", "Johan", "Johanna", "Johannes", "John", "Jon",
    "Jonas", "Jonathan", "Jordi", "Jorge", "José", "Josef", "Joseph", "Josh", "Joshua", "Juan",
    "Judith", "Julia", "Julian", "Julie", "Julien", "Juliana", "Julio", "Jürgen", "Justin", "Kai",
    "Kamal", "Karen", "Karim", "Karin", "Karl", "Kate", "Katharina", "Katherine", "Kathrin",
    "Katie", "Katrin", "Kenji", "Kevin", "Khalid", "Kim", "Kiran", "Klaus", "Kofi", "Konstantin",
    "Kristina", "Lars", "Laura", "Lauren", "Laurent", "Layla", "Lea", "Léa", "Leah", "Lena", "Leo",
    "Léo", "Leon", "Léon", "Leonardo", "Leonie", "Liam", "Lily", "Lina", "Linda", "Lisa", "Liu",
    "Lorenzo", "Louis", "Louise", "Luana", "Lucas", "Luca", "Lucía", "Lucia", "Lucie", "Lucy",
    "Luis", "Luís", "Luisa", "Luiz", "Lukas", "Luke", "Magda", "Magdalena", "Maja", "Malik",
    "Manon", "Manuel", "Manuela", "Marc", "Marcel", "Marcela", "Marcelo", "Marco", "Marcos",
    "Marcus", "Margaret", "Margarida", "Maria", "María", "Mariana", "Marie", "Marina", "Mario",
    "Marion", "Marius", "Marta", "Martha", "Martin", "Martín", "Mary", "Mateo", "Mateus", "Mathias",
    "Mathieu", "Matías", "Matt", "Matteo", "Matthew", "Matthias", "Maurice", "Max", "Maxime",
    "Maximilian", "Maya", "Mehmet", "Mei", "Melanie", "Melissa", "Mia", "Michael", "Michel",
    "Michelle", "Miguel", "Mika", "Mike", "Mila", "Milan", "Ming", "Miriam", "Mohamed", "Mohammed",
    "Monica", "Mónica", "Monika", "Moritz", "Nadia", "Nadine", "Nando", "Naomi", "Natalia",
    "Natalie", "Nathan", "Neha", "Nico", "Nicolas", "Nicolás", "Nicole", "Niklas", "Nikolai",
    "Nils", "Nina", "Noah", "Noemi", "Nora", "Nuno", "Olga", "Oliver", "Olivia", "Omar", "Oscar",
    "Óscar", "Otto", "Pablo", "Paolo", "Pascal", "Patricia", "Patrick", "Paul", "Paula", "Paulo",
    "Pedro", "Peter", "Petra", "Philipp", "Philippe", "Pierre", "Pietro", "Pilar", "Pooja", "Priya",
    "Rachel", "Rafael", "Rafa", "Rahul", "Raj", "Ramón", "Raquel", "Raúl", "Ravi", "Rebecca",
    "Renata", "Renato", "René", "Ricardo", "Richard", "Rita", "Rob", "Robert", "Roberto", "Robin",
    "Rodrigo", "Roman", "Rosa", "Rui", "Ruth", "Ryan", "Sabine", "Sabrina", "Sakura", "Sam",
    "Samir", "Samuel", "Sandra", "Santiago", "Sara", "Sarah", "Sasha", "Sebastian", "Sebastián",
    "Sébastien", "Selin", "Sergio", "Sergei", "Shreya", "Simon", "Simone", "Sina", "Sofia", "Sofía",
    "Sophia", "Sophie", "Stefan", "Stefanie", "Stéphane", "Stephanie", "Steve", "Steven", "Sunil",
    "Susan", "Susanne", "Sven", "Sylvie", "Takeshi", "Tamara", "Tanja", "Teresa", "Theo", "Théo",
    "Thiago", "Thomas", "Thorsten", "Tiago", "Tim", "Timo", "Tobias", "Tom", "Tomás", "Tomasz",
    "Tony", "Tyler", "Uwe", "Valentina", "Valentin", "Valeria", "Vanessa", "Vera", "Veronica",
    "Victor", "Víctor", "Victoria", "Vikram", "Vincent", "Vinícius", "Viktor", "Wei", "Wen",
    "William", "Wolfgang", "Xavier", "Ximena", "Yara", "Yasmin", "Yuki", "Yusuf", "Yuto", "Zainab",
    "Zara", "Zoe", "Zoé", "Zofia", "Hiro", "Ji-woo", "Seo-yeon", "Min-jun", "Thabo", "Chinedu",
    "Ngozi", "Oluwaseun", "Tunde", "Wanjiru", "Amina", "Youssef", "Layla", "Noura", "Rania", "Omid",
    "Reza", "Darius", "Parisa", "Anil", "Sanjay", "Vijay", "Lakshmi", "Divya", "Aditya", "Rohan",
    "Sneha", "Akira", "Yui", "Haruka", "Ren", "Sota", "Xin", "Li", "Zhang", "Hao", "Yan", "Lin",
    "Jun", "Minh", "Linh", "Trang", "Andrzej", "Piotr", "Krzysztof", "Agnieszka", "Katarzyna",
    "Małgorzata", "Pavel", "Petr", "Jiří", "Tereza", "Ivana", "Milos", "Dragan", "Nikola",
    "Aleksandar", "Giorgos", "Eleni", "Nikos", "Sigrid", "Ingeborg", "Kerstin", "Birgit", "Ulrike",
    "Dieter", "Helmut", "Günter", "Heinz", "Rainer", "Ralf", "Sören", "Jörg", "Jannik", "Leonie",
    "Lennart", "Mats", "Oskar", "Pia", "Greg", "Will", "May", "Mark", "Grant", "Bill", "Chase",
    "Hope", "Joy", "Rose", "Amber", "Dawn", "Faith", "Pat", "Sue", "Guy", "Drew", "Art", "Ray",
    "Gene", "Carol", "Dean", "Wade", "Hunter", "Austin", "Jordan", "Sky", "Summer", "April", "June",
];

/// Given names that are also ordinary words ("Will", "May", "Mark the test
/// as flaky"): at a sentence start they need a sign that a person is meant.
#[rustfmt::skip]
pub const AMBIGUOUS_NAMES: &[&str] = &[
    "will", "may", "mark", "grant", "bill", "chase", "hope", "joy", "rose", "amber", "dawn",
    "faith", "pat", "sue", "guy", "drew", "art", "ray", "gene", "carol", "dean", "wade", "hunter",
    "austin", "jordan", "sky", "summer", "april", "june", "max", "frank", "jack", "rob", "sam",
    "ed", "tim", "nick", "matt", "eve", "ben", "dan", "jan", "kim", "ren", "li", "lin", "yan",
    "jun", "hana", "rosa", "vera", "ali", "jean", "hans", "hugo", "bruno", "milan", "santiago",
    "sofia", "paris", "chen", "mei", "wei", "grace", "robin", "rita",
];

/// Lexicon entries that are also ordinary words ("go", "swift", "notion",
/// "excel"): they count only when capitalized as a name.
#[rustfmt::skip]
pub const CAP_ONLY: &[&str] = &[
    "go", "swift", "rust", "ruby", "node", "usa", "uk", "java", "julia", "dart", "crystal", "r",
    "c", "nim", "vault", "consul", "nomad", "notion", "slack", "signal", "excel", "word", "teams",
    "outlook", "edge", "chrome", "safari", "opera", "arc", "brave", "atlas", "phoenix", "hugo",
    "bruno", "express", "spring", "rails", "pages", "numbers", "keynote", "things", "make", "chef",
    "puppet", "salt", "spark", "beam", "hive", "presto", "flux", "drone", "envoy", "tempo", "loki",
    "vector", "jest", "mocha", "bun", "solid", "ember", "remix", "astro", "vue", "react", "nest",
    "echo", "gin", "fiber", "rocket", "ray", "feast", "black", "ghost", "sanity", "temporal",
    "linear", "coda", "zoom", "messenger", "sketch", "framer", "loom", "cursor", "zed", "atom",
    "rider", "kind", "argo", "travis", "bamboo", "renovate", "apollo", "unity", "surface", "quest",
    "pixel", "galaxy", "nest", "prime", "ledger", "delta", "orange", "swiss", "square", "visa",
    "shell", "merck", "arm", "meta", "segment", "render", "railway", "neon", "elastic", "expo",
    "bolt", "amazon", "apple", "citi", "wise", "monday", "us", "la", "sf", "tap", "ing", "sap",
    "eu", "un", "ey", "bp", "esa", "nice", "rio", "santiago", "salvador", "georgia", "jordan",
    "virginia", "washington", "victoria", "sofia", "milan", "lima", "cali", "mitte", "camden",
    "queens", "reminders", "terminal", "warp", "kitty", "hyper", "harbor", "nexus", "scoop",
    "lambda", "aurora", "athena", "glue", "amplify", "bedrock", "workers", "spanner", "b2", "r2",
    "echo", "alexa", "siri", "kindle", "oyster", "avios", "mercedes", "target", "line", "grab",
    "discord", "telegram", "canva", "miro", "wasabi", "vite", "buck", "ninja", "nix", "kind",
    "cron", "alpine", "arch", "windows", "office", "access", "celery", "tomcat", "jetty",
    "passenger", "puma", "babel", "rollup", "parcel", "biome", "prettier", "cortex", "mimir",
    "thanos", "jaeger", "falco", "calico", "flannel", "harbor", "ollama", "llama", "gemini",
    "haiku", "sonnet", "opus", "whisper", "claude", "copilot", "cursor", "obsidian", "linear",
    "basecamp", "free", "emirates", "iberia", "allianz", "starling", "chase", "target", "orange",
    "phoenix", "austin", "portland", "georgia", "nice", "porto", "faro", "braga", "palma",
    "valence", "essen", "bonn", "bern", "gion", "rom", "roma", "barajas", "requests", "click",
    "rich", "attrs", "moment", "plug", "room", "glide", "dagger", "turbo", "lit", "warp", "hyper",
    "tracing", "zap", "cobra", "viper", "blade", "twig", "doctrine", "exposed", "trio", "tonic",
    "stimulus", "immer", "yup", "hilt", "huey", "husky", "pillow", "rayon", "anyhow", "guava",
    "jackson", "changesets", "rq", "oban",
];

/// Ordinary words that are capitalized only because they start a sentence
/// or a note ("Deploy", "Remember", "Reunión:"), in the five languages.
#[rustfmt::skip]
pub const START_STOP: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "it's", "i", "we", "you", "he",
    "she", "they", "our", "my", "your", "his", "her", "their", "there", "here", "what", "when",
    "where", "why", "how", "who", "which", "whatever", "if", "unless", "while", "after", "before",
    "since", "until", "once", "as", "at", "by", "for", "from", "in", "into", "of", "on", "onto",
    "to", "with", "without", "via", "per", "about", "over", "under", "and", "or", "but", "so",
    "also", "then", "than", "not", "no", "yes", "ok", "okay", "all", "any", "some", "every", "each",
    "both", "either", "neither", "none", "most", "many", "much", "more", "less", "few", "several",
    "other", "another", "same", "only", "just", "always", "never", "often", "usually", "sometimes",
    "please", "thanks", "thank", "hi", "hello", "hey", "dear", "nice", "good", "great", "bad",
    "new", "old", "first", "last", "next", "previous", "current", "latest", "recent", "main",
    "primary", "secondary", "default", "important", "note", "notes", "reminder", "remember",
    "lesson", "lessons", "decision", "decisions", "decided", "todo", "fyi", "tip", "tips",
    "warning", "update", "status", "summary", "context", "background", "action", "actions",
    "outcome", "result", "results", "question", "answer", "issue", "problem", "fix", "fixed", "bug",
    "known", "user", "users", "customer", "customers", "client", "prospect", "lead", "contact",
    "account", "team", "teams", "manager", "owner", "agent", "memory", "preference", "preferences",
    "prefers", "prefer", "likes", "wants", "needs", "uses", "use", "using", "used", "avoid", "ask",
    "tell", "ping", "check", "run", "deploy", "deploys", "build", "builds", "merge", "set", "add",
    "remove", "delete", "create", "make", "keep", "move", "moved", "switch", "switched", "try",
    "stop", "start", "restart", "restarting", "upgrade", "upgrading", "after", "book", "order",
    "call", "send", "share", "turn", "pin", "pinned", "paused", "asked", "selected", "migrated",
    "renew", "reply", "wait", "don't", "do", "does", "did", "doesn't", "didn't", "can", "can't",
    "cannot", "could", "should", "would", "must", "might", "shall", "let", "let's", "is", "are",
    "was", "were", "be", "been", "has", "have", "had", "get", "got", "go", "see", "look", "read",
    "write", "edit", "editing", "review", "sync", "meeting", "call", "standup", "kickoff", "retro",
    "postmortem", "incident", "outage", "oncall", "on-call", "handoff", "hiring", "budget", "board",
    "planning", "sprint", "roadmap", "architecture", "security", "data", "product", "design",
    "engineering", "eng", "ops", "infra", "platform", "frontend", "backend", "mobile", "web",
    "monorepo", "repo", "primary", "backups", "backup", "secrets", "cpu", "memory", "alert",
    "alerts", "everything", "everything's", "everyone", "nothing", "someone", "somebody", "today",
    "tomorrow", "yesterday", "tonight", "morning", "weekly", "daily", "nightly", "monthly",
    "quarterly", "quick", "ai", "agent", "trip", "travel", "flight", "flights", "hotel",
    "restaurant", "wine", "coffee", "lunch", "dinner", "gym", "doctor", "dentist", "birthday",
    "family", "friend", "old", "college", "school", "support", "sales", "billing", "pricing",
    "legal", "finance", "hr", "leadership", "offsite", "oncall", "prod", "staging", "production",
    "local", "remote", "wants", "feature", "features", "error", "errors", "tests", "test",
    "testing", "logs", "log", "docs", "documentation", "config", "configuration", "settings",
    "secrets", "tokens", "cron", "jobs", "job", "worker", "workers", "queue", "cache", "caching",
    "database", "server", "servers", "service", "services", "cluster", "clusters", "pods", "nodes",
    "frontend", "apps", "app", "dashboard", "dashboards", "metrics", "traces", "tracing",
    "monitoring", "observability", "latency", "throughput", "performance", "cost", "costs",
    "pricing", "plan", "plans", "trial", "renewal", "contract", "invoice", "invoices", "refund",
    "refunds", "ticket", "tickets", "pr", "prs", "commit", "commits", "branch", "branches",
    "release", "releases", "rollback", "rollout", "canary", "feature", "flags", "project",
    "projects", "initiative", "goal", "goals", "okr", "okrs", "kpi", "q1", "q2", "q3", "q4", "h1",
    "h2", "til", "lgtm", "nb", "ps", "re", "fw", "wip", "tbd", "eta", "el", "la", "los", "las",
    "un", "una", "unos", "unas", "lo", "le", "les", "l'", "des", "du", "de", "del", "da", "do",
    "dos", "das", "der", "die", "den", "dem", "ein", "eine", "einen", "o", "os", "as", "um", "uma",
    "y", "e", "et", "und", "ou", "oder", "pero", "mais", "mas", "aber", "en", "em", "im", "am",
    "zu", "para", "por", "pour", "par", "avec", "con", "com", "mit", "für", "sin", "sans", "sem",
    "ohne", "si", "se", "wenn", "quand", "cuando", "quando", "nunca", "jamais", "nie", "siempre",
    "toujours", "sempre", "immer", "no", "não", "ne", "nicht", "kein", "keine", "il", "elle", "ils",
    "elles", "nous", "vous", "on", "je", "ich", "wir", "sie", "er", "es", "ele", "ela", "eles",
    "nós", "yo", "nosotros", "ellos", "ellas", "usted", "ustedes", "este", "esta", "estos", "estas",
    "ese", "esa", "esto", "ce", "cette", "ces", "cet", "dieser", "diese", "dieses", "unser",
    "unsere", "nuestro", "nuestra", "notre", "nos", "nosso", "nossa", "mi", "mon", "ma", "mes",
    "meu", "minha", "hay", "hoy", "mañana", "ayer", "heute", "morgen", "gestern", "aujourd'hui",
    "demain", "hier", "hoje", "amanhã", "ontem", "todo", "toda", "todos", "tout", "tous", "alle",
    "alles", "cada", "chaque", "jeder", "jede", "nota", "notiz", "hinweis", "recordatorio",
    "recordar", "rappel", "lembrar", "lembrete", "lección", "lektion", "leçon", "lição", "decisión",
    "entscheidung", "décision", "decisão", "reunión", "besprechung", "réunion", "reunião",
    "prefiere", "préfère", "prefere", "bevorzugt", "usar", "utiliser", "nutzen", "migramos",
    "precisa", "hay", "il faut", "viaje", "viagem", "voyage", "reise", "restaurante", "restaurant",
    "préféré", "preferido", "favorito", "lieblingsrestaurant", "atención", "atenção", "attention",
    "achtung", "importante", "wichtig", "cliente", "kunde", "projekt", "proyecto", "projeto",
    "projet", "equipo", "équipe", "equipe", "el usuario", "usuario", "usuário", "utilisateur",
    "nutzer", "servicio", "serviço", "dienst", "service", "función", "fonction", "funktion",
    "função", "klasse", "clase", "classe", "la", "las", "après", "después", "depois", "nach", "vor",
    "antes", "avant", "durante", "pendant", "während", "hola", "bonjour", "hallo", "olá", "gracias",
    "merci", "danke", "obrigado", "sí", "oui", "ja", "sim", "lo", "morgen", "abend", "tisch",
    "zugangsdaten", "fixe", "fix", "ahead",
];

/// Capitalized words that are never names on their own: days, months,
/// languages and nationalities, and words often capitalized for emphasis.
#[rustfmt::skip]
pub const ALWAYS_STOP: &[&str] = &[
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mondays",
    "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays", "january", "february",
    "march", "april", "june", "july", "august", "september", "october", "november", "december",
    "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "lunes", "martes",
    "miércoles", "jueves", "viernes", "sábado", "domingo", "enero", "febrero", "marzo", "abril",
    "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre", "montag",
    "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "januar", "februar",
    "märz", "juni", "juli", "oktober", "dezember", "lundi", "mardi", "mercredi", "jeudi",
    "vendredi", "samedi", "dimanche", "janvier", "février", "mars", "avril", "mai", "juin",
    "juillet", "août", "septembre", "octobre", "novembre", "décembre", "janeiro", "fevereiro",
    "março", "maio", "junho", "julho", "setembro", "outubro", "dezembro", "english", "spanish",
    "german", "french", "portuguese", "italian", "dutch", "chinese", "japanese", "korean",
    "russian", "arabic", "hindi", "polish", "swedish", "european", "american", "british",
    "canadian", "mexican", "brazilian", "indian", "african", "asian", "latin", "español", "deutsch",
    "français", "português", "inglés", "englisch", "anglais", "inglês", "i", "i'm", "i've", "i'll",
    "i'd", "ok", "okay", "yes", "no", "thanks", "internet", "web", "wi-fi", "wifi", "series", "q1",
    "q2", "q3", "q4", "tl;dr", "todo", "fixme", "note", "websocket", "websockets", "devops", "saas",
    "paas", "iaas", "oauth", "oauth2", "openid", "phd", "mba", "ceo", "cto", "cfo", "coo", "cpo",
    "vp", "svp", "evp", "hr", "ui", "ux", "sdk", "cli", "gui", "ide", "llm", "llms", "ml", "ai",
    "gpu", "gpus", "cpu", "ram", "ssd", "christmas", "easter", "new year", "ramadan", "diwali",
    "thanksgiving", "halloween", "black friday", "cyber monday", "the", "a", "an", "and", "or",
    "of", "dockerfile", "makefile", "jenkinsfile", "procfile", "gemfile", "vagrantfile", "rakefile",
    "podfile", "brewfile", "justfile", "readme", "changelog", "license",
];

/// German function words; two of them mark a text as German, where every
/// noun is capitalized and capitals prove little.
#[rustfmt::skip]
pub const GERMAN_WORDS: &[&str] = &[
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "und", "oder",
    "nicht", "ist", "sind", "wird", "werden", "wurde", "mit", "für", "auf", "von", "zu", "zum",
    "zur", "im", "bei", "nach", "aus", "auch", "noch", "nur", "sich", "über", "wir", "ich", "sie",
    "es", "hat", "haben", "soll", "muss", "kann", "durch", "immer", "vorher", "bitte", "statt",
    "unser", "unsere", "dort", "bis", "gehen", "geht", "läuft", "liegen",
];

/// Titles dropped in front of a person's name.
#[rustfmt::skip]
pub const TITLES: &[&str] = &[
    "dr", "mr", "mrs", "ms", "miss", "prof", "professor", "sir", "herr", "frau", "mme", "mlle", "m",
    "monsieur", "madame", "sr", "sra", "srta", "dra", "don", "doña", "dona", "señor", "señora",
    "senhor", "senhora", "dott", "ing",
];

/// Abbreviations whose full stop does not end a sentence.
#[rustfmt::skip]
pub const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "st", "mt", "ft", "m", "sr", "sra", "srta", "dra", "jr", "vs",
    "e.g", "i.e", "etc", "approx", "inc", "ltd", "co", "corp", "no", "nr", "ca", "bzw", "z.b",
    "u.a", "p.ex", "ex", "av", "ave",
];

/// Last words that make a capitalized name an organization.
#[rustfmt::skip]
pub const ORG_SUFFIXES: &[&str] = &[
    "inc", "corp", "corporation", "co", "company", "gmbh", "ag", "se", "sa", "sas", "sarl", "ltd",
    "llc", "plc", "bv", "nv", "ab", "oy", "as", "spa", "srl", "sl", "ltda", "labs", "lab", "bank",
    "banco", "banque", "airlines", "airways", "air", "university", "universidad", "universidade",
    "université", "universität", "college", "school", "academy", "institute", "hospital", "clinic",
    "clinica", "clínica", "klinik", "health", "healthcare", "medical", "pharma", "group", "grupo",
    "groupe", "gruppe", "holdings", "capital", "ventures", "partners", "systems", "technologies",
    "technology", "tech", "software", "solutions", "consulting", "industries", "dynamics",
    "electric", "energy", "motors", "foods", "media", "studio", "studios", "games", "foundation",
    "fundación", "fundação", "stiftung", "insurance", "seguros", "versicherung", "telecom",
    "logistics", "analytics", "robotics", "networks", "security", "cloud", "ai", "io", "café",
    "cafe", "coffee", "bakery", "bar", "pub", "grill", "kitchen", "bistro", "brasserie",
    "trattoria", "pizzeria", "taberna", "hotel", "hostel", "inn", "resort", "centre", "center",
    "gym", "fitness", "club", "store", "shop", "market", "mart", "pharmacy", "dental", "law",
    "legal", "associates", "agency", "press", "records",
];

/// Words that make a name a place: "Oak Street", "Union Square".
#[rustfmt::skip]
pub const PLACE_SUFFIXES: &[&str] = &[
    "street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "lane", "square", "park",
    "station", "airport", "city", "valley", "beach", "island", "islands", "bay", "lake", "mountain",
    "mountains", "hills", "heights", "harbour", "harbor", "bridge", "straße", "strasse", "platz",
    "calle", "rua", "avenida", "plaza", "praça", "rue", "place", "quai", "district", "county",
    "province", "region", "central", "east", "west", "north", "south",
];

/// Last words of named events: "Web Summit", "Berlin Marathon".
#[rustfmt::skip]
pub const EVENT_SUFFIXES: &[&str] = &[
    "summit", "marathon", "conference", "conf", "festival", "expo", "fair", "week", "days", "cup",
    "awards", "hackathon", "meetup", "forum", "congress", "olympics", "championship",
];

/// Lower-case words allowed inside a multi-word name: "Bank of Lisbon",
/// "Rio de Janeiro", "São José dos Campos".
#[rustfmt::skip]
pub const CONNECTORS: &[&str] = &[
    "of", "de", "del", "do", "da", "dos", "das", "du", "des", "la", "le", "von", "van", "&", "di",
    "della",
];

/// Words after a sentence-initial word that show it names someone or
/// something doing things ("Will asked…", "Initech reported…").
#[rustfmt::skip]
pub const SUBJECT_VERBS: &[&str] = &[
    "is", "was", "has", "had", "said", "says", "asked", "asks", "wants", "wanted", "needs",
    "thinks", "prefers", "likes", "owns", "leads", "runs", "joined", "left", "reported", "reports",
    "churned", "signed", "renewed", "suggested", "mentioned", "agreed", "approved", "will", "can",
    "and", "und", "y", "et", "e", "confirmed", "requested", "called", "emailed", "wrote", "built",
    "moved", "sent", "shared", "flagged", "noticed", "found", "raised", "es", "est", "ist", "é",
    "hat", "a", "tiene", "tem", "dijo", "disse", "sagt", "dit", "préfère", "prefiere", "prefere",
    "bevorzugt", "quiere", "quer", "veut", "möchte", "travaille", "trabaja", "trabalha", "arbeitet",
    "vive", "mora", "wohnt", "habite", "dice", "diz", "pidió", "pediu", "ha", "hizo", "fez",
    "leitet", "dirige", "lidera",
];

/// Words after "Go", "Swift" or "Make" at a sentence start that show the
/// tool is meant rather than the verb or adjective.
#[rustfmt::skip]
pub const TECH_FOLLOWERS: &[&str] = &[
    "is", "was", "has", "files", "file", "code", "module", "modules", "services", "service",
    "binary", "binaries", "toolchain", "version", "versions", "on", "app", "apps", "sdk", "client",
    "library", "libraries", "developers", "generics", "programs", "program", "tests", "test",
    "build", "builds", "routines", "package", "packages", "1", "2", "3", "targets", "workers",
    "backend", "server",
];

/// Last parts of hyphenated service names: "payments-api", "ledger-svc".
#[rustfmt::skip]
pub const SERVICE_SUFFIXES: &[&str] = &[
    "api", "svc", "service", "server", "srv", "worker", "workers", "gateway", "gw", "proxy", "db",
    "cache", "queue", "bot", "daemon", "agent", "web", "ui", "app", "backend", "frontend",
    "serving", "exporter", "operator", "controller", "scheduler", "runner", "monolith", "core",
    "engine", "portal", "console", "admin", "auth", "sync", "ingest", "pipeline", "etl", "consumer",
    "producer", "processor", "handler", "router", "broker", "store", "registry", "indexer",
    "crawler", "search", "renew", "cron", "job", "lambda", "sdk", "cli", "lib", "py", "js", "ts",
    "rs", "go", "v1", "v2", "v3", "prod", "staging", "dev", "primary", "replica", "master", "node",
    "host", "vm", "box", "cluster",
];

/// Words around a hyphenated name that make it a project (a repo or an
/// initiative) rather than a running service.
#[rustfmt::skip]
pub const PROJECT_CUES: &[&str] = &[
    "repo", "repos", "repository", "monorepo", "dépôt", "repositório", "repositorio", "initiative",
    "project", "projet", "projeto", "proyecto", "projekt", "library", "package", "crate", "gem",
    "module", "codebase", "sdk", "site",
];

/// Words around a hyphenated name that make it a service, host or system.
#[rustfmt::skip]
pub const SERVICE_CUES: &[&str] = &[
    "service", "servicio", "serviço", "dienst", "host", "hostname", "server", "servidor", "serveur",
    "cluster", "sidecar", "job", "worker", "daemon", "app", "bucket", "topic", "queue", "database",
    "pipeline", "lambda", "function", "container", "pod", "instance", "vm", "machine", "box",
    "node", "deployment", "cronjob", "endpoint", "bot",
];

/// Words just before a name that give its type and are not part of it:
/// "Kunde Zalando", "project Orion", "Restaurant Tim Raue".
#[rustfmt::skip]
pub const ORG_CUES: &[&str] = &[
    "customer", "client", "cliente", "kunde", "kunden", "prospect", "vendor", "partner",
    "restaurant", "restaurante", "firma", "empresa", "entreprise", "société", "startup",
    "competitor",
];

/// Words before a name that make it a place: "in Lagos", "nach Berlin".
#[rustfmt::skip]
pub const PLACE_PREPS: &[&str] = &[
    "in", "en", "em", "im", "nach", "à", "near", "around", "desde", "to", "no", "na", "aus",
    "in der", "à la", "office", "visit", "visiting", "lives", "live", "based",
];

/// @handles that name a team, not a person.
#[rustfmt::skip]
pub const TEAM_HANDLES: &[&str] = &[
    "team", "devrel", "ops", "sre", "platform", "oncall", "on-call", "support", "security", "infra",
    "eng", "engineering", "frontend", "backend", "data", "mobile", "design", "qa", "everyone",
    "here", "channel", "all", "admins", "admin", "devops", "product", "sales", "marketing", "legal",
    "finance", "hr", "it", "release", "releases", "core", "web",
];

/// File extensions: a token ending in one is a file, not a name.
#[rustfmt::skip]
pub const FILE_EXTENSIONS: &[&str] = &[
    "yaml", "yml", "toml", "json", "env", "html", "htm", "css", "py", "rs", "ts", "tsx", "jsx",
    "js", "go", "rb", "java", "kt", "md", "txt", "csv", "xml", "sql", "sh", "lock", "cfg", "ini",
    "conf", "log", "pdf", "png", "jpg", "svg", "zip", "gz", "tar", "dockerfile", "proto", "tf",
    "tfvars", "ipynb", "c", "h", "cpp", "hpp", "swift", "php", "vue", "svelte",
];

/// Words before "May" that make it the month: "in May", "since May".
#[rustfmt::skip]
pub const DATE_WORDS: &[&str] = &[
    "in", "since", "until", "till", "by", "early", "late", "mid", "of", "from", "before", "after",
    "during", "next", "last", "this", "on", "through", "end", "start", "beginning",
];

/// Letter prefixes of "word+digits" tokens that are not host names
/// ("sha256", "utf-8", "base64").
#[rustfmt::skip]
pub const NOT_HOSTS: &[&str] = &[
    "sha", "utf", "iso", "base", "int", "uint", "float", "arm", "amd", "win", "md", "crc", "aes",
    "rsa", "ed", "tls", "ssl", "http", "ipv", "mp", "covid", "top", "day", "week", "gpt", "llama",
    "python", "node", "java", "php", "es", "ecma", "html", "css", "oauth", "sev", "pg", "mysql",
    "ubuntu", "debian", "macos", "ios", "android", "x", "h", "p",
];

/// Acronyms too generic to be a name or part of one ("Microsoft SSO" names
/// Microsoft; "Zoho CRM" is a product).
#[rustfmt::skip]
pub const GENERIC_ACRONYMS: &[&str] = &[
    "api", "apis", "ci", "cd", "pr", "prs", "db", "dbs", "sql", "json", "csv", "pdf", "http",
    "https", "ssh", "dns", "vpn", "sso", "slo", "slos", "sla", "slas", "eta", "utc", "ceo", "cto",
    "cfo", "coo", "cpo", "rest", "sdk", "cli", "ui", "ux", "id", "ids", "mfa", "2fa", "saml", "dm",
    "dms", "qa", "ml", "ai", "llm", "pm", "em", "hr", "it", "tl", "tldr", "fyi", "asap", "eod",
    "eow", "ooo", "pto", "wip", "lgtm", "til", "okr", "okrs", "kpi", "kpis", "roi", "mvp", "poc",
    "b2b", "b2c", "faq", "url", "urls", "uri", "html", "css", "xml", "yaml", "tls", "ssl", "tcp",
    "udp", "ip", "vm", "vms", "os", "gpu", "cpu", "ram", "ssd", "oom", "sev", "sev1", "sev2", "p0",
    "p1", "p2", "rca", "dpa", "nda", "msa", "sow", "rfp", "gb", "mb", "kb", "tb", "ms", "qps",
    "rps", "ttl", "etl", "crud", "orm", "jwt", "cors", "csrf", "xss", "env", "dev", "prod", "uat",
    "gp", "usd", "eur", "gbp", "brl", "vat", "iva", "tva", "cep", "cpf", "nif", "dst", "est", "pst",
    "cet", "cest", "am", "pm", "q&a",
];

/// Last parts of hyphenated words that are descriptions, not names
/// ("open-source", "customer-facing", "self-hosted").
#[rustfmt::skip]
pub const HYPHEN_MODIFIERS: &[&str] = &[
    "source", "side", "based", "only", "time", "party", "hosted", "facing", "level", "wide", "like",
    "free", "safe", "aware", "friendly", "ready", "native", "term", "call", "off", "in", "on", "up",
    "out", "down", "over", "house", "prem", "premises", "tenant", "platform", "running", "lived",
    "known", "date", "text", "latency", "availability", "scale", "grade", "critical", "sensitive",
    "specific", "driven", "first", "end",
];

/// Verbs of dependency management: the lower-case word after one and before
/// a version is a library ("pins httpx 0.27").
#[rustfmt::skip]
pub const DEPENDENCY_VERBS: &[&str] = &[
    "pin", "pins", "pinned", "bump", "bumps", "bumped", "upgrade", "upgraded", "upgrading",
    "downgrade", "downgraded", "install", "installed", "require", "requires", "required", "vendor",
    "vendored", "update", "updated", "uses", "using", "use", "add", "added",
];

/// Widely used libraries, most written in lower case.
#[rustfmt::skip]
pub const LIBRARIES: &[&str] = &[
    "requests", "httpx", "aiohttp", "urllib3", "boto3", "botocore", "matplotlib", "seaborn",
    "plotly", "bokeh", "scrapy", "beautifulsoup", "BeautifulSoup", "lxml", "pillow", "Pillow",
    "opencv", "OpenCV", "tqdm", "click", "typer", "rich", "loguru", "structlog", "attrs",
    "marshmallow", "psycopg", "psycopg2", "asyncpg", "pymongo", "redis-py", "kombu", "dramatiq",
    "huey", "rq", "gevent", "eventlet", "uvloop", "trio", "anyio", "orjson", "ujson", "lodash",
    "axios", "moment", "Moment.js", "dayjs", "date-fns", "zod", "Prisma", "prisma", "Drizzle",
    "Sequelize", "TypeORM", "Knex", "Mongoose", "mongoose", "Socket.IO", "socket.io", "RxJS",
    "rxjs", "Three.js", "D3", "D3.js", "Chart.js", "tRPC", "Zustand", "TanStack Query",
    "React Query", "SWR", "Formik", "Yup", "Immer", "Lit", "Alpine.js", "htmx", "Turbo", "Stimulus",
    "Hotwire", "Phoenix LiveView", "LiveView", "Ecto", "Oban", "Plug", "Absinthe", "reqwest",
    "hyper", "tonic", "warp", "clap", "anyhow", "thiserror", "rayon", "crossbeam", "tracing",
    "sqlx", "sea-orm", "gorm", "cobra", "viper", "zap", "logrus", "testify", "Jackson", "Gson",
    "Lombok", "JUnit", "Mockito", "Guava", "Netty", "Vert.x", "Akka", "Pekko", "Retrofit", "OkHttp",
    "Glide", "Room", "Dagger", "Hilt", "Koin", "Ktor", "Exposed", "RSpec", "Capybara", "Devise",
    "Pundit", "Nokogiri", "PHPUnit", "Eloquent", "Doctrine", "Twig", "Blade", "xUnit", "NUnit",
    "Dapper", "Entity Framework", "AutoMapper", "MediatR", "Serilog", "Polly", "pre-commit",
    "husky", "lint-staged", "commitlint", "semantic-release", "changesets",
];

/// Words before a lone name that make it a person: "led by Farah".
#[rustfmt::skip]
pub const PERSON_BEFORE: &[&str] = &[
    "by", "with", "ask", "asked", "ping", "cc", "tell", "told", "thank", "thanks", "dear", "hi",
    "hey", "hello", "sister", "brother", "mother", "father", "wife", "husband", "partner", "son",
    "daughter", "friend", "colleague", "boss", "manager", "mentor", "por", "pela", "pelo", "par",
    "von", "mit", "avec", "con", "com", "uncle", "aunt", "cousin",
];

/// Words after a lone name that make it a person: "Hamid takes over".
#[rustfmt::skip]
pub const PERSON_AFTER: &[&str] = &[
    "said", "says", "asked", "asks", "wants", "thinks", "prefers", "likes", "loves", "hates",
    "suggested", "mentioned", "agreed", "will", "can", "takes", "took", "leads", "owns", "joined",
    "lives", "works", "dijo", "disse", "dit", "sagt", "quiere", "quer", "veut", "will", "kann",
    "puede", "pode", "peut", "retomará", "cuida", "est", "préfère", "prefiere", "prefere",
    "bevorzugt", "travaille", "trabaja", "trabalha", "arbeitet", "vive", "mora", "wohnt", "habite",
    "leitet", "lidera", "dirige", "wrote", "approved", "reviewed",
];

/// Business and software nouns often capitalized in notes ("the Billing
/// team", "VP Engineering"): never a name on their own, and dropped from
/// the front of one.
#[rustfmt::skip]
pub const COMMON_NOUNS: &[&str] = &[
    "engineering", "platform", "billing", "support", "sales", "marketing", "finance", "legal",
    "product", "design", "data", "security", "ops", "infra", "infrastructure", "backend",
    "frontend", "mobile", "growth", "success", "customer", "customers", "editor", "admin",
    "dashboard", "console", "settings", "handbook", "wiki", "doc", "docs", "team", "office",
    "manager", "director", "engineer", "engineers", "lead", "head", "staff", "principal", "senior",
    "junior", "intern", "interns", "light", "dark", "mode", "theme", "user", "users", "account",
    "accounts", "admin", "operations", "research", "analytics", "procurement", "compliance",
    "people", "talent", "recruiting", "hiring", "leadership", "management", "executive", "board",
    "committee", "council", "review", "meeting", "sync", "standup", "retro", "planning", "roadmap",
    "release", "launch", "beta", "alpha", "ga", "production", "staging", "development", "testing",
    "qa", "quality", "reliability", "performance", "monitoring", "observability", "alerting",
    "incident", "incidents", "postmortem", "runbook", "runbooks", "playbook", "on-call", "oncall",
    "tier", "plan", "enterprise", "pro", "premium", "basic", "free", "starter", "business",
    "team's", "company", "org", "organization", "department", "division", "group", "squad", "guild",
    "chapter", "tribe", "project", "program", "initiative", "workstream", "epic", "story", "task",
    "ticket", "issue", "bug", "feature", "request", "report", "summary", "overview", "notes",
    "note", "agenda", "minutes", "action", "items", "decision", "decisions", "owner", "checkout",
    "payments", "search", "login", "signup", "onboarding", "cart", "home", "profile", "inbox",
    "homepage", "landing", "pricing", "invoices", "reports", "orders",
];

/// Lower-case words after a capitalized run that make it a group of people
/// rather than a name: "the Billing team", "the Data Platform folks".
#[rustfmt::skip]
pub const GROUP_WORDS: &[&str] = &[
    "team", "teams", "squad", "folks", "org", "department", "dept", "group", "guild", "crew",
    "chapter", "tribe", "unit", "pod", "people",
];
