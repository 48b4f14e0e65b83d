import ReactorApps
import ReactorNodeKit

/// reactor-node: one binary for every role of a ReactorBus deployment, running the example apps.
@main
enum ReactorNode {
    static func main() async {
        await ReactorNodeKit.main(apps: [
            App("counter", reactor: Counter(), options: [
                AppOption("effect-delay", "SECONDS", help: "counter app only: each effect waits this long first (demos, tests)"),
            ]) { options throws(AppOptionError) in CounterEffects(delay: try options.seconds("effect-delay") ?? .zero) },
            App("primes", reactor: Primes(), effects: PrimesEffects()),
            App("inventory", reactor: Inventory(), effects: InventoryEffects()),
            App("catalog", reactor: Catalog(), effects: CatalogEffects()),
            App("shop", reactor: Shop(), parts: Shop.effects()),
            App("search", reactor: Search(), effects: SearchEffects()),
            App("ticker", reactor: Ticker(), effects: TickerEffects(), subscriptions: TickerFeed()),
            App("desk", reactor: Desk(), parts: Desk.effects(), subscriptions: Desk.subscriptions()),
        ], program: "reactor-node")
    }
}
