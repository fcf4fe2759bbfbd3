public import TYTracker

/// Where a product was shared to.
public enum ShareChannel: String, Sendable, CaseIterable {
  case whatsapp, instagram
  case copyLink = "copy_link"
  case other
}

/// What the product detail screen tracks. Changing a case breaks its call sites at compile time;
/// each case is an event of the tracking plan (``planned``).
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

  /// The plan's event for this case (``TYPlan``, generated from `Plans/TYTracker.json` on every
  /// build): its name, kind and typed parameters. A parameter whose type the plan changes stops
  /// compiling here.
  public var planned: any CoreTrackable {
    switch self {
    case .viewed(let product):
      TYPlan.ProductDetailViewed(
        productID: product.id, brand: product.brand, category: product.category, price: product.price,
        currency: product.currency)
    case .favouriteChanged(let product, true): TYPlan.ProductFavourited(productID: product.id)
    case .favouriteChanged(let product, false): TYPlan.ProductUnfavourited(productID: product.id)
    case .sizeSelected(let product, let size): TYPlan.ProductSizeSelected(productID: product.id, size: size)
    case .addedToCart(let product, let size, let quantity):
      TYPlan.ProductAddedToCart(
        productID: product.id, brand: product.brand, category: product.category, price: product.price,
        currency: product.currency, size: size ?? "none", quantity: quantity, value: product.price * Double(quantity))
    case .addToCartFailed(let product, let reason): TYPlan.ProductAddToCartFailed(productID: product.id, reason: reason)
    case .shared(let product, let channel): TYPlan.ProductShared(productID: product.id, channel: channel.rawValue)
    }
  }

  public var name: String { planned.name }
  public var kind: EventKind { planned.kind }
  public var parameters: EventParameters { planned.parameters }

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

  /// The product as a one-item order: `currency`, `value` (price × quantity) and `items`.
  private static func ga4Order(_ product: Product, quantity: Int, size: String?) -> CommerceOrder {
    CommerceOrder(currency: product.currency, items: [product.commerceItem(quantity: quantity, size: size)])
  }
}
