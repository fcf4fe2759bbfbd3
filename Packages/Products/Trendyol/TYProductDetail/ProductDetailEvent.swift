public import TYTracker

/// Where a product was shared to.
public enum ShareChannel: String, Sendable, CaseIterable {
  case whatsapp, instagram
  case copyLink = "copy_link"
  case other
}

/// What the product detail screen tracks. Changing a case breaks its call sites at compile time.
///
/// Every service gets the uniform serialisation except where a vendor has its own vocabulary:
/// Firebase gets GA4's e-commerce events (`view_item`, `add_to_wishlist`, `add_to_cart`, `share`),
/// Mixpanel gets title-case names with its property style.
public enum ProductDetailEvent: CoreTrackable, Equatable {
  case viewed(Product)
  case favouriteChanged(Product, isFavourite: Bool)
  case sizeSelected(Product, size: String)
  case addedToCart(Product, size: String?, quantity: Int)
  case addToCartFailed(Product, reason: String)
  case shared(Product, channel: ShareChannel)

  public var name: String {
    switch self {
    case .viewed: "product_detail_viewed"
    case .favouriteChanged(_, let isFavourite): isFavourite ? "product_favourited" : "product_unfavourited"
    case .sizeSelected: "product_size_selected"
    case .addedToCart: "product_added_to_cart"
    case .addToCartFailed: "product_add_to_cart_failed"
    case .shared: "product_shared"
    }
  }

  public var kind: EventKind {
    switch self {
    case .viewed: .screenView
    case .addToCartFailed: .event
    default: .action
    }
  }

  public var parameters: EventParameters {
    switch self {
    case .viewed(let product):
      Self.productParameters(product)
    case .favouriteChanged(let product, _):
      ["product_id": .string(product.id)]
    case .sizeSelected(let product, let size):
      ["product_id": .string(product.id), "size": .string(size)]
    case .addedToCart(let product, let size, let quantity):
      Self.productParameters(product).merging([
        "size": .string(size ?? "none"), "quantity": .int(quantity),
        "value": .double(product.price * Double(quantity)),
      ])
    case .addToCartFailed(let product, let reason):
      ["product_id": .string(product.id), "reason": .string(reason)]
    case .shared(let product, let channel):
      ["product_id": .string(product.id), "channel": .string(channel.rawValue)]
    }
  }

  public func payload(for service: ServiceID) -> ServicePayload? {
    switch service {
    case TYService.firebase: firebasePayload
    case TYService.mixpanel: mixpanelPayload
    default: nil
    }
  }

  /// GA4's recommended e-commerce events, each with its `items`.
  private var firebasePayload: ServicePayload? {
    switch self {
    case .viewed(let product):
      ServicePayload(name: "view_item", parameters: Self.ga4Order(product, quantity: 1, size: nil).parameters)
    case .favouriteChanged(let product, true):
      ServicePayload(name: "add_to_wishlist", parameters: Self.ga4Order(product, quantity: 1, size: nil).parameters)
    case .addedToCart(let product, let size, let quantity):
      ServicePayload(name: "add_to_cart", parameters: Self.ga4Order(product, quantity: quantity, size: size).parameters)
    case .shared(let product, let channel):
      ServicePayload(
        name: "share",
        parameters: ["method": .string(channel.rawValue), "content_type": "product", "item_id": .string(product.id)]
      )
    default:
      nil
    }
  }

  /// Mixpanel's naming style: title-case event names and property names.
  private var mixpanelPayload: ServicePayload? {
    switch self {
    case .viewed(let product):
      ServicePayload(
        name: "Product Viewed",
        parameters: [
          "Product ID": .string(product.id), "Brand": .string(product.brand), "Price": .double(product.price),
        ]
      )
    case .addedToCart(let product, _, let quantity):
      ServicePayload(
        name: "Added To Cart",
        parameters: ["Product ID": .string(product.id), "Quantity": .int(quantity)]
      )
    default:
      nil
    }
  }

  private static func productParameters(_ product: Product) -> EventParameters {
    [
      "product_id": .string(product.id), "brand": .string(product.brand), "category": .string(product.category),
      "price": .double(product.price), "currency": .string(product.currency),
    ]
  }

  /// The product as a one-item order: `currency`, `value` (price × quantity) and `items`.
  private static func ga4Order(_ product: Product, quantity: Int, size: String?) -> CommerceOrder {
    CommerceOrder(currency: product.currency, items: [product.commerceItem(quantity: quantity, size: size)])
  }
}
