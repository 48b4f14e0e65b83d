import OrderFulfilment
import ReactorNodeKit

/// order-node: every command of reactor-node (authority, worker, send, observe, run, keygen)
/// for the order-fulfilment app. Its two options of its own set up the simulated services.
@main
enum OrderNode {
    static func main() async {
        await ReactorNodeKit.main(apps: [
            App("fulfilment", reactor: Fulfilment(), options: [
                AppOption("warehouse-delay", "SECONDS", help: "the warehouse takes this long to reserve stock (default 0)"),
                AppOption("gateway-failures", "N", help: "the payment gateway fails the first N attempts of each charge (default 0)"),
            ]) { options throws(AppOptionError) in
                let failures = options.string("gateway-failures") ?? "0"
                guard let count = Int(failures), count >= 0 else {
                    throw AppOptionError("--gateway-failures '\(failures)' must be a whole number, 0 or more")
                }
                return FulfilmentEffects(
                    warehouse: Warehouse(delay: try options.seconds("warehouse-delay") ?? .zero),
                    payments: PaymentGateway(unavailableAttempts: count)
                )
            },
        ])
    }
}
